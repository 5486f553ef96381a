// Request validation whose cost is bounded by the contract, not by the input.
//
// Every request-side schema is compiled twice (scripts/lib/codegen.ts): once stopping at the first
// error (linear in the input; an array over its maxItems, a string over its maxLength fail before
// any item is looked at) and once collecting every error (allErrors, whose cost grows faster than
// the input on arrays of failing items). The first-error validator always runs first; a valid input
// never meets the other one. An invalid input gets the full list only when it is small; a large one
// gets its first error, so a 100,000-item body costs a few milliseconds whatever it holds.
import type { ErrorObject, ValidateFunction } from 'ajv';
import paramValidatorsFast from '../../generated/param-validators-fast.cjs';
import paramValidators from '../../generated/param-validators.cjs';
import requestValidatorsFast from '../../generated/request-validators-fast.cjs';
import requestValidators from '../../generated/request-validators.cjs';

type Validators = Record<string, ValidateFunction>;

const sets = {
  body: { fast: requestValidatorsFast as unknown as Validators, full: requestValidators as unknown as Validators },
  params: { fast: paramValidatorsFast as unknown as Validators, full: paramValidators as unknown as Validators },
};

/** Inputs with at most this many values (objects, arrays and scalars) get every error reported. */
export const FULL_REPORT_MAX_VALUES = 5000;

/** The most field errors an error response carries (the contract's ErrorContext.errors maxItems). */
export const MAX_FIELD_ERRORS = 100;

/** Whether `data` holds at most `max` values, counted without recursion (stops as soon as it knows). */
export function isSmall(data: unknown, max = FULL_REPORT_MAX_VALUES): boolean {
  const stack: unknown[] = [data];
  let seen = 0;
  while (stack.length) {
    const v = stack.pop();
    if (++seen > max) return false;
    if (v && typeof v === 'object') {
      if (Array.isArray(v)) {
        if (seen + v.length > max) return false;
        for (const x of v) stack.push(x);
      } else {
        const values = Object.values(v);
        if (seen + values.length > max) return false;
        for (const x of values) stack.push(x);
      }
    }
  }
  return true;
}

export interface ValidationResult {
  /** The AJV errors to report (null: valid). */
  errors: ErrorObject[] | null;
  /** True when the input was too large for a full report and only its first error is given. */
  firstOnly: boolean;
}

/**
 * Validates `data` in place (defaults filled in, parameters coerced) with the named generated
 * validator of `kind`. Unknown names validate nothing (operations without that part).
 */
export function validate(kind: keyof typeof sets, name: string, data: unknown): ValidationResult {
  const fast = sets[kind].fast[name];
  if (!fast || fast(data)) return { errors: null, firstOnly: false };
  const full = sets[kind].full[name];
  if (full && isSmall(data)) {
    // Valid for the full validator too would mean the two disagree; keep the first error then.
    return full(data) ? { errors: fast.errors ?? [], firstOnly: true } : { errors: full.errors ?? [], firstOnly: false };
  }
  return { errors: fast.errors ?? [], firstOnly: true };
}
