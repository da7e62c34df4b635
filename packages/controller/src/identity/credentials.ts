// The xDS listener's TLS, changeable while it serves: a renewed serving certificate or a new trust
// bundle takes effect for the next handshake (gRPC calls the TLS server's setSecureContext), and
// connections already up keep theirs. Every client is asked for a certificate and let in without
// one (`rejectUnauthorized: false`): the stream, not the handshake, is refused, with a status that
// names the Gateway it claimed (see verify.ts).
import * as grpc from '@grpc/grpc-js';

export interface ServingMaterial {
  certPem: string;
  keyPem: string;
  /** The CAs whose client certificates the handshake verifies. */
  trustBundlePem: string;
}

const contextOf = (m: ServingMaterial) => ({ cert: Buffer.from(m.certPem), key: Buffer.from(m.keyPem), ca: Buffer.from(m.trustBundlePem) });

export class RotatingServerCredentials extends grpc.ServerCredentials {
  constructor(initial: ServingMaterial) {
    super({ requestCert: true, rejectUnauthorized: false }, contextOf(initial));
  }

  /** Uses new material for every handshake from now on. */
  update(material: ServingMaterial): void {
    this.updateSecureContextOptions(contextOf(material));
  }

  _equals(other: grpc.ServerCredentials): boolean {
    return other === this;
  }
}
