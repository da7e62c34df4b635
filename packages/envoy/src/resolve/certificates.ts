// Certificates and CA bundles a Gateway refers to (listener certificateRefs, frontend
// caCertificateRefs, the backend clientCertificateRef): whether a reference may be used at all —
// its kind, a ReferenceGrant for another namespace, the object, and content that is a real
// certificate whose key matches — and, for the Envoy stage, the PEM of the ones that may.
import { keyPairFault, parseCertificates } from '../pem.js';
import { GATEWAY_GROUP, type GatewayRecord, type Inputs, type ObjectReference, key } from '../read/index.js';
import { permitted } from './grants.js';

/**
 * Why a reference cannot be used, in the three ways Gateway API tells apart: a kind extlb does not
 * read, another namespace without a ReferenceGrant, or an object that is missing or malformed.
 */
export interface RefFault {
  fault: 'kind' | 'notPermitted' | 'invalid';
  message: string;
}

function groupKind(ref: ObjectReference): string {
  return ref.group === '' ? ref.kind : `${ref.kind}.${ref.group}`;
}

/**
 * Checks references from Gateways. A Secret's or ConfigMap's content is parsed once, however
 * many listeners use it.
 */
export class TlsRefs {
  private readonly keyPairs = new Map<string, string | undefined>();
  private readonly bundles = new Map<string, string | undefined>();

  constructor(private readonly inputs: Inputs) {}

  private allowed(from: GatewayRecord, ref: ObjectReference): boolean {
    return permitted(this.inputs, {
      // A ListenerSet's listeners refer to certificates as the ListenerSet (its own kind and namespace).
      from: { group: GATEWAY_GROUP, kind: from.ref.kind, namespace: from.meta.namespace },
      to: { group: '', kind: ref.kind, namespace: ref.namespace, name: ref.name },
    });
  }

  private notPermitted(from: GatewayRecord, ref: ObjectReference): RefFault {
    return {
      fault: 'notPermitted',
      message: `${ref.kind} ${ref.namespace}/${ref.name} is in another namespace, and no ReferenceGrant there lets ${from.ref.kind}s of namespace ${from.meta.namespace} refer to it`,
    };
  }

  /** A reference to a core object of `kind`, permitted, whose content `fault` finds usable (checked once per object). */
  private checked(
    from: GatewayRecord,
    ref: ObjectReference,
    kind: string,
    cache: Map<string, string | undefined>,
    fault: (k: string) => string | undefined,
  ): RefFault | undefined {
    if (ref.group !== '' || ref.kind !== kind) return { fault: 'kind', message: `refers to a ${groupKind(ref)}; only ${kind}s are supported` };
    if (!this.allowed(from, ref)) return this.notPermitted(from, ref);
    const k = key(ref.namespace, ref.name);
    if (!cache.has(k)) cache.set(k, fault(k));
    const message = cache.get(k);
    return message === undefined ? undefined : { fault: 'invalid', message };
  }

  /** A Secret of type kubernetes.io/tls whose tls.crt and tls.key make a usable key pair. */
  keyPair(from: GatewayRecord, ref: ObjectReference): RefFault | undefined {
    return this.checked(from, ref, 'Secret', this.keyPairs, (k) => this.secretFault(k));
  }

  private secretFault(k: string): string | undefined {
    const secret = this.inputs.secrets.get(k);
    if (!secret) return `Secret ${k} not found`;
    const why = (what: string) => `Secret ${k} ${what}`;
    if (secret.type !== 'kubernetes.io/tls') return why(`is of type ${secret.type}; a certificate must be in a Secret of type kubernetes.io/tls`);
    if (secret.tlsCrt === undefined || secret.tlsKey === undefined) return why('needs both tls.crt and tls.key');
    const fault = keyPairFault(secret.tlsCrt, secret.tlsKey);
    return fault === undefined ? undefined : why(`is not a usable certificate: ${fault}`);
  }

  /** A ConfigMap whose ca.crt holds PEM CA certificates. */
  caBundle(from: GatewayRecord, ref: ObjectReference): RefFault | undefined {
    return this.checked(from, ref, 'ConfigMap', this.bundles, (k) => this.configMapFault(k));
  }

  private configMapFault(k: string): string | undefined {
    const configMap = this.inputs.configMaps.get(k);
    if (!configMap) return `ConfigMap ${k} not found`;
    if (configMap.caCrt === undefined) return `ConfigMap ${k} has no ca.crt`;
    const parsed = parseCertificates(configMap.caCrt, 'ca.crt');
    return typeof parsed === 'string' ? `ConfigMap ${k}: ${parsed}` : undefined;
  }
}

/** Where the Envoy stage gets the PEM of the certificates and CA bundles the IR names. */
export interface CertificateLookup {
  keyPair(namespace: string, name: string): { certificateChain: string; privateKey: string } | undefined;
  caBundle(namespace: string, name: string): string | undefined;
}

/** Certificates from the records the read stage made. */
export class InputCertificates implements CertificateLookup {
  constructor(private readonly inputs: Inputs) {}

  keyPair(namespace: string, name: string): { certificateChain: string; privateKey: string } | undefined {
    const secret = this.inputs.secrets.get(key(namespace, name));
    if (secret?.tlsCrt === undefined || secret.tlsKey === undefined) return undefined;
    return { certificateChain: secret.tlsCrt, privateKey: secret.tlsKey };
  }

  caBundle(namespace: string, name: string): string | undefined {
    return this.inputs.configMaps.get(key(namespace, name))?.caCrt;
  }
}
