/** The Envoy release output is for: `1.35` (override_host), `1.38` (adds served-endpoint reporting), `legacy` (before 1.35: ORIGINAL_DST). */
export type EnvoyTarget = '1.35' | '1.38' | 'legacy';

/** How backend endpoints reach Envoy: listed (`static`), resolved from a headless Service (`dns`), or served over EDS (`eds`). */
export type EndpointMode = 'static' | 'dns' | 'eds';
