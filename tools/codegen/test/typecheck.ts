// Type-checks TypeScript sources in memory with the compiler API, strict, as users compile them.
// Include a package.json with "type": "module" among the files so that they are read as ESM.
import ts from 'typescript';

export function typeErrors(files: Record<string, string>): string[] {
  const options: ts.CompilerOptions = {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    noUncheckedIndexedAccess: true,
    verbatimModuleSyntax: true,
    types: [],
    lib: ['lib.es2023.d.ts'],
  };
  const host = ts.createCompilerHost(options);
  const read = host.readFile.bind(host);
  const exists = host.fileExists.bind(host);
  host.readFile = (f) => files[f] ?? read(f);
  host.fileExists = (f) => f in files || exists(f);
  const dirExists = host.directoryExists?.bind(host);
  host.directoryExists = (d) => Object.keys(files).some((f) => f.startsWith(`${d}/`)) || (dirExists?.(d) ?? false);
  host.getSourceFile = (
    (get) => (f: string, lang: ts.ScriptTarget | ts.CreateSourceFileOptions) =>
      f in files ? ts.createSourceFile(f, files[f]!, lang) : get(f, lang)
  )(host.getSourceFile.bind(host));
  const program = ts.createProgram(Object.keys(files), options, host);
  return ts.getPreEmitDiagnostics(program).map((d) => `${d.file?.fileName ?? ''}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`);
}
