// A record per item of a stage (a slideshow's slide, a faceless video's scene), kept in the
// resource's state column under one key as index → value: what the stage knows about an item
// before the stage finishes, such as the provider job submitted for it (stored before polling,
// so a retried attempt resumes it and never pays twice) and where its picture came from. The
// record starts from what earlier attempts stored; it is written whole after each change, one
// write at a time (items of a stage may run concurrently).
import type { AppContext } from '../context.ts';
import type { ProviderJobRef } from '../engines/generation.ts';
import { readJobRef, type JobStore } from '../engines/resumable.ts';
import type { Resource } from './resource.ts';

export interface ItemState<V> {
  get(index: number): V | undefined;
  /** Stores (undefined: forgets) the item's value; resolves once written. */
  set(index: number, value: V | undefined): Promise<void>;
  /** Every item's value, by index. */
  all(): Record<number, V>;
  /** Records on the resource that a paid provider call completed (`Resource.markPaid`), after the pending writes. */
  markPaid(provider: string): Promise<void>;
}

/** The items' record under `key` of the resource's state (`row` as the attempt started it). */
export function itemState<V>(ctx: AppContext, resource: Resource<any, any>, row: object, key: string): ItemState<V> {
  const stored = resource.stateOf(row)?.[key];
  const values: Record<number, V> = { ...(stored && typeof stored === 'object' ? (stored as Record<number, V>) : {}) };
  const id = resource.idOf(row);
  let writing = Promise.resolve();
  return {
    get: (i) => values[i],
    all: () => ({ ...values }),
    markPaid(provider) {
      writing = writing.then(() => resource.markPaid(ctx, id, provider));
      return writing;
    },
    set(i, value) {
      if (value === undefined) delete values[i];
      else values[i] = value;
      const whole = { ...values };
      writing = writing.then(() => resource.saveState(ctx, id, { [key]: whole }));
      return writing;
    },
  };
}

/**
 * Item `index`'s provider job kept in `jobs` (runProviderJob's JobStore); `abandon` says when to
 * cancel it. A paid provider job that delivered is recorded on the resource (`Resource.markPaid`).
 */
export function itemJob(jobs: ItemState<ProviderJobRef>, index: number, abandon: (err: unknown) => boolean): JobStore {
  return {
    stored: readJobRef(jobs.get(index)),
    save: (ref) => jobs.set(index, ref ?? undefined),
    abandon,
    paid: (ref) => jobs.markPaid(ref.provider),
  };
}
