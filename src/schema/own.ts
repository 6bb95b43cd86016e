/**
 * Sets an own, enumerable, writable property, also when the key is `__proto__` (which plain
 * assignment would treat as the prototype). The one way stepwire copies keys that come from users
 * (inputs, form fields, query strings, step outputs) into an object.
 * @internal
 */
export function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__')
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}
