// BackendTLSPolicy (gateway.networking.k8s.io/v1) as written, with the API server's rules: a policy
// it would refuse stays a record marked invalid, so that its status says why and its targets never
// fall back to plaintext.
import type { JsonObject } from '../json.js';
import { hostnameProblem } from '../limits.js';
import type { Reader } from './reader.js';
import type { BackendTlsPolicy, CaCertificateRef, Meta, PolicyTarget, SubjectAltName } from './records.js';

/** Gateway API's PreciseHostname: a Hostname without a wildcard. */
const PRECISE_HOSTNAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const WELL_KNOWN = /^(System|([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9]))$/;
/** AbsoluteURI: a scheme and a scheme-specific part. */
const ABSOLUTE_URI = /^(([^:/?#]+):)(\/\/([^/?#]*))([^?#]*)(\?([^#]*))?(#(.*))?/;

function readTargets(r: Reader, raw: unknown): PolicyTarget[] {
  const list = r.array(raw, 'spec.targetRefs');
  if (list.length === 0) r.invalid('spec.targetRefs', 'Required value');
  const targets = list.flatMap((t, index): PolicyTarget[] => {
    const p = `spec.targetRefs[${index}]`;
    const o = r.object(t, p);
    const kind = r.string(o?.kind, `${p}.kind`, true);
    const name = r.string(o?.name, `${p}.name`, true);
    if (!o || !kind || !name) return [];
    const target: PolicyTarget = { index, group: r.string(o.group, `${p}.group`) ?? '', kind, name };
    const section = r.string(o.sectionName, `${p}.sectionName`);
    if (section) target.sectionName = section;
    return [target];
  });
  const same = (a: PolicyTarget, b: PolicyTarget) => a.group === b.group && a.kind === b.kind && a.name === b.name;
  if (targets.some((a) => targets.some((b) => same(a, b) && (a.sectionName === undefined) !== (b.sectionName === undefined))))
    r.invalid('spec.targetRefs', 'sectionName must be specified when targetRefs includes 2 or more references to the same target');
  else if (targets.some((a) => targets.filter((b) => same(a, b) && a.sectionName === b.sectionName).length > 1))
    r.invalid('spec.targetRefs', 'sectionName must be unique when targetRefs includes 2 or more references to the same target');
  return targets;
}

function readCaRefs(r: Reader, raw: unknown): CaCertificateRef[] {
  return r.array(raw, 'spec.validation.caCertificateRefs').flatMap((c, i): CaCertificateRef[] => {
    const p = `spec.validation.caCertificateRefs[${i}]`;
    const o = r.object(c, p);
    const kind = r.string(o?.kind, `${p}.kind`, true);
    const name = r.string(o?.name, `${p}.name`, true);
    return o && kind && name ? [{ group: r.string(o.group, `${p}.group`) ?? '', kind, name, path: p }] : [];
  });
}

function readSubjectAltNames(r: Reader, raw: unknown): SubjectAltName[] {
  return r.array(raw, 'spec.validation.subjectAltNames').flatMap((s, i): SubjectAltName[] => {
    const p = `spec.validation.subjectAltNames[${i}]`;
    const o = r.object(s, p);
    const type = r.oneOf(o?.type, `${p}.type`, ['Hostname', 'URI'] as const);
    if (o?.type === undefined) r.invalid(`${p}.type`, 'Required value');
    const hostname = r.string(o?.hostname, `${p}.hostname`) || undefined;
    const uri = r.string(o?.uri, `${p}.uri`) || undefined;
    if (!type) return [];
    // The four CEL rules of SubjectAltName: the field its type names is set, and only that one.
    const [value, other] = type === 'Hostname' ? [hostname, uri] : [uri, hostname];
    const otherType = type === 'Hostname' ? 'URI' : 'Hostname';
    if (value === undefined) r.invalid(p, `SubjectAltName element must contain ${type}, if Type is set to ${type}`);
    else if (other !== undefined) r.invalid(p, `SubjectAltName element must not contain ${otherType}, if Type is not set to ${otherType}`);
    else if (type === 'Hostname' && hostnameProblem(value)) r.invalid(`${p}.hostname`, hostnameProblem(value) as string);
    else if (type === 'URI' && !ABSOLUTE_URI.test(value)) r.invalid(`${p}.uri`, `${JSON.stringify(value)} is not a valid absolute URI`);
    else return [{ type, value }];
    return [];
  });
}

export function readBackendTlsPolicy(r: Reader, spec: JsonObject, meta: Meta): BackendTlsPolicy {
  const targets = readTargets(r, spec.targetRefs);
  if (spec.validation === undefined) r.invalid('spec.validation', 'Required value');
  const v = r.object(spec.validation, 'spec.validation') ?? {};
  const caCertificateRefs = readCaRefs(r, v.caCertificateRefs);
  const wellKnown = r.string(v.wellKnownCACertificates, 'spec.validation.wellKnownCACertificates') || undefined;
  if (caCertificateRefs.length > 0 && wellKnown !== undefined)
    r.invalid('spec.validation', 'must not contain both CACertificateRefs and WellKnownCACertificates');
  else if (caCertificateRefs.length === 0 && wellKnown === undefined)
    r.invalid('spec.validation', 'must specify either CACertificateRefs or WellKnownCACertificates');
  if (wellKnown !== undefined && !WELL_KNOWN.test(wellKnown))
    r.invalid('spec.validation.wellKnownCACertificates', `${JSON.stringify(wellKnown)} is not System or a domain-prefixed name`);
  const hostname = r.string(v.hostname, 'spec.validation.hostname', true) ?? '';
  if (hostname !== '' && !PRECISE_HOSTNAME.test(hostname))
    r.invalid('spec.validation.hostname', `${JSON.stringify(hostname)} is not a precise hostname (lower-case DNS labels, no wildcard)`);
  const policy: BackendTlsPolicy = {
    ref: r.ref,
    meta,
    targets,
    caCertificateRefs,
    hostname,
    subjectAltNames: readSubjectAltNames(r, v.subjectAltNames),
    options: r.labels(spec.options, 'spec.options'),
  };
  if (wellKnown !== undefined) policy.wellKnownCACertificates = wellKnown;
  if (r.problems.length > 0) policy.invalid = r.problems.map((p) => `${p.path}: ${p.message}`).join('; ');
  return policy;
}
