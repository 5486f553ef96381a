// Spectral ruleset: spectral:oas plus the OWASP API Security Top 10 ruleset, loaded from
// node_modules (no network). Any rule we relax is listed below with the reason.
import { oas } from '@stoplight/spectral-rulesets';
import owasp from '@stoplight/spectral-owasp-ruleset';

export default {
  extends: [[oas, 'recommended'], [owasp, 'recommended']],
  rules: {},
};
