#!/usr/bin/env node
// The `forecast` executable of package.json's "bin": TypeScript runs through tsx, registered
// here so that the command works from any directory, not only with `node --import tsx`.
import { register } from 'tsx/esm/api';

register();
await import('./forecast.ts');
