/**
 * JSON shapes declared once, as values: each yields its TypeScript type ({@link TypeOf}) and can
 * check a parsed JSON value at run time ({@link Shape.check}). protocol.ts declares the daemon's
 * payloads with these, so the contract test can hold the daemon's real JSON against the very
 * declarations the extension compiles with. Objects are closed: a key a shape does not declare is
 * a mismatch, which is how a new daemon key that nobody declared gets noticed.
 */

export interface Shape<T> {
  /** What the shape accepts, for messages: "string", "number | null", "{...}". */
  readonly describe: string;
  /** Every way `value` differs from this shape, each naming where (`at`, e.g. `status.sessions[0].id`). */
  check(value: unknown, at: string): string[];
  /** Type-level only: the TypeScript type of a value of this shape. Never set. */
  readonly _type?: T;
}

/** A field an object may leave out. */
export interface OptionalShape<T> extends Shape<T> {
  readonly optional: true;
}

export type TypeOf<S> = S extends Shape<infer T> ? T : never;

type Fields = Record<string, Shape<unknown>>;
type OptionalKeys<F extends Fields> = { [K in keyof F]: F[K] extends OptionalShape<unknown> ? K : never }[keyof F];
type RequiredKeys<F extends Fields> = Exclude<keyof F, OptionalKeys<F>>;
type Flat<T> = { [K in keyof T]: T[K] } & {};
export type ObjectOf<F extends Fields> = Flat<
  { [K in RequiredKeys<F>]: TypeOf<F[K]> } & { [K in OptionalKeys<F>]?: TypeOf<F[K]> }
>;

export interface ObjectShape<F extends Fields> extends Shape<ObjectOf<F>> {
  readonly fields: F;
}

function typeName(value: unknown): string {
  return value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value;
}

function primitive<T>(name: 'string' | 'number' | 'boolean'): Shape<T> {
  return {
    describe: name,
    check: (value, at) => (typeof value === name && !(name === 'number' && !Number.isFinite(value)) ? [] : [`${at}: expected ${name}, got ${typeName(value)}`]),
  };
}

export const string: Shape<string> = primitive('string');
export const number: Shape<number> = primitive('number');
export const boolean: Shape<boolean> = primitive('boolean');

/** One of the given strings. */
export function literal<const V extends readonly string[]>(...values: V): Shape<V[number]> & { readonly values: V } {
  return {
    values,
    describe: values.map((v) => JSON.stringify(v)).join(' | '),
    check: (value, at) =>
      typeof value === 'string' && values.includes(value) ? [] : [`${at}: expected ${values.join(' | ')}, got ${JSON.stringify(value)}`],
  };
}

/** The shape, or null: the daemon sends the key with a null value. */
export function nullable<T>(shape: Shape<T>): Shape<T | null> {
  return { describe: `${shape.describe} | null`, check: (value, at) => (value === null ? [] : shape.check(value, at)) };
}

/** A key the daemon may leave out (not the same as null: see {@link nullable}). */
export function optional<T>(shape: Shape<T>): OptionalShape<T> {
  return { ...shape, optional: true, describe: `${shape.describe} (optional)` };
}

export function array<T>(shape: Shape<T>): Shape<T[]> {
  return {
    describe: `${shape.describe}[]`,
    check: (value, at) =>
      Array.isArray(value) ? value.flatMap((v, i) => shape.check(v, `${at}[${i}]`)) : [`${at}: expected array, got ${typeName(value)}`],
  };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** An object with any string keys, every value of one shape (counts by policy, by kind, ...). */
export function record<T>(shape: Shape<T>): Shape<Record<string, T>> {
  return {
    describe: `{[key]: ${shape.describe}}`,
    check: (value, at) =>
      isPlainObject(value)
        ? Object.entries(value).flatMap(([k, v]) => shape.check(v, `${at}.${k}`))
        : [`${at}: expected object, got ${typeName(value)}`],
  };
}

/** An object whose keys, if present, are among `keys`, every value of one shape. */
export function recordOf<K extends string, T>(keys: Shape<K>, shape: Shape<T>): Shape<Partial<Record<K, T>>> {
  return {
    describe: `{[${keys.describe}]?: ${shape.describe}}`,
    check: (value, at) =>
      isPlainObject(value)
        ? Object.entries(value).flatMap(([k, v]) => [...keys.check(k, `${at} key`), ...shape.check(v, `${at}.${k}`)])
        : [`${at}: expected object, got ${typeName(value)}`],
  };
}

/** A closed object: every declared key required unless {@link optional}, no undeclared key allowed. */
export function object<F extends Fields>(fields: F): ObjectShape<F> {
  return {
    fields,
    describe: '{...}',
    check: (value, at) => {
      if (!isPlainObject(value)) {
        return [`${at}: expected object, got ${typeName(value)}`];
      }
      const problems: string[] = [];
      for (const [key, shape] of Object.entries(fields)) {
        if (key in value) {
          problems.push(...shape.check(value[key], `${at}.${key}`));
        } else if (!(shape as Partial<OptionalShape<unknown>>).optional) {
          problems.push(`${at}.${key}: required (${shape.describe}) but missing`);
        }
      }
      for (const key of Object.keys(value)) {
        if (!(key in fields)) {
          problems.push(`${at}.${key}: sent but not declared (${JSON.stringify(value[key])?.slice(0, 80)})`);
        }
      }
      return problems;
    },
  };
}
