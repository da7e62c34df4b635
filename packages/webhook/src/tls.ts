// Serving certificate and key, reloaded from disk when they change. cert-manager and kubelet
// rotate a mounted Secret by swapping a symlink in its folder, which fs.watch on the file itself
// misses, so the folders are watched and, where inotify is unavailable or drops events, the files'
// stats are polled as well.
import { watch, watchFile, unwatchFile, readFileSync, type FSWatcher } from 'node:fs';
import { dirname } from 'node:path';
import { createSecureContext, type SecureContextOptions } from 'node:tls';

/** TLS 1.2 is the oldest version the API server speaks to webhooks, and the oldest allowed here. */
export const MIN_TLS_VERSION = 'TLSv1.2';

export interface KeyPair {
  cert: Buffer;
  key: Buffer;
}

export function secureContextOptions(pair: KeyPair): SecureContextOptions {
  return { cert: pair.cert, key: pair.key, minVersion: MIN_TLS_VERSION };
}

/** Reads and checks a key pair; throws when the files are missing or the key does not match. */
export function loadKeyPair(certFile: string, keyFile: string): KeyPair {
  const pair = { cert: readFileSync(certFile), key: readFileSync(keyFile) };
  createSecureContext(secureContextOptions(pair));
  return pair;
}

export interface CertificateWatcherOptions {
  certFile: string;
  keyFile: string;
  /** Called with a new, checked key pair. */
  onChange: (pair: KeyPair) => void;
  /** Called when the files changed but do not form a usable pair; the previous one stays in use. */
  onError: (err: Error) => void;
  pollIntervalMs?: number;
  /** Rotations write two files; waiting a moment avoids loading a new cert with the old key. */
  debounceMs?: number;
}

export class CertificateWatcher {
  private current: KeyPair;
  private readonly watchers: FSWatcher[] = [];
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  // Kept so close() removes only this watcher's listeners on files others may poll too.
  private readonly poll = () => this.schedule();

  constructor(
    private readonly options: CertificateWatcherOptions,
    initial: KeyPair,
  ) {
    this.current = initial;
    const { certFile, keyFile } = options;
    for (const dir of new Set([dirname(certFile), dirname(keyFile)])) {
      try {
        const w = watch(dir, { persistent: false }, () => this.schedule());
        w.on('error', () => {}); // the folder went away; polling still covers the files
        this.watchers.push(w);
      } catch {
        // fs.watch is unsupported here (some network and overlay filesystems): polling covers it.
      }
    }
    const interval = options.pollIntervalMs ?? 2000;
    for (const file of new Set([certFile, keyFile])) {
      watchFile(file, { persistent: false, interval }, this.poll);
    }
  }

  get pair(): KeyPair {
    return this.current;
  }

  private schedule(): void {
    if (this.closed) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.reload(), this.options.debounceMs ?? 100);
    this.timer.unref();
  }

  /** Loads the files now; returns whether a different, valid pair is now in use. */
  reload(): boolean {
    if (this.closed) return false;
    let pair: KeyPair;
    try {
      pair = loadKeyPair(this.options.certFile, this.options.keyFile);
    } catch (err) {
      this.options.onError(err instanceof Error ? err : new Error(String(err)));
      return false;
    }
    if (pair.cert.equals(this.current.cert) && pair.key.equals(this.current.key)) return false;
    this.current = pair;
    this.options.onChange(pair);
    return true;
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    for (const w of this.watchers) w.close();
    for (const file of new Set([this.options.certFile, this.options.keyFile])) unwatchFile(file, this.poll);
  }
}
