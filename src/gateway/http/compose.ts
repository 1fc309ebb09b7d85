import type { Context } from "./context.js";

export type Next = () => Promise<void>;
export type Middleware = (ctx: Context, next: Next) => Promise<void>;

/** Runs middleware in order, each deciding whether and when to call the next (onion order, as in koa/hono). */
export function compose(middleware: readonly Middleware[]): (ctx: Context) => Promise<void> {
  return (ctx) => {
    let last = -1;
    const dispatch = (index: number): Promise<void> => {
      if (index <= last) return Promise.reject(new Error("next() called more than once"));
      last = index;
      const current = middleware[index];
      if (current === undefined) return Promise.resolve();
      try {
        return current(ctx, () => dispatch(index + 1));
      } catch (error) {
        return Promise.reject(error);
      }
    };
    return dispatch(0);
  };
}
