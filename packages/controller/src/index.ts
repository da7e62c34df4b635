// @extlb/controller. For now its xDS server; the rest of the control plane builds on it.
export * from './xds/index.js';
