import { commands } from './commands/index.js';
import { EXIT_USAGE, UsageError, write, type Io } from './io.js';

function overview(): string {
  const names = Object.keys(commands).sort();
  return `usage: extlb <command> [flags]\n\ncommands: ${names.join(', ')}\n\nRun "extlb <command> --help" for a command's flags.\n`;
}

/** Runs `extlb` with the given arguments and returns the exit code. */
export async function main(argv: string[], io: Io): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    await write(name === undefined ? io.stderr : io.stdout, overview());
    return name === undefined ? EXIT_USAGE : 0;
  }
  const load = Object.hasOwn(commands, name) ? commands[name] : undefined;
  if (!load) {
    await write(io.stderr, `extlb: unknown command "${name}"\n\n${overview()}`);
    return EXIT_USAGE;
  }
  const command = await load();
  if (rest.includes('--help') || rest.includes('-h')) {
    await write(io.stdout, `${command.summary}\n\nusage: ${command.usage}\n`);
    return 0;
  }
  try {
    return await command.run(rest, io);
  } catch (err) {
    if (err instanceof UsageError) {
      await write(io.stderr, `extlb ${name}: ${err.message}\n\nusage: ${command.usage}\n`);
      return EXIT_USAGE;
    }
    throw err;
  }
}
