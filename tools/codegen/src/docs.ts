export function apiReference(): string { return "" }
