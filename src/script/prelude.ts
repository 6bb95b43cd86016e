/**
 * The guest-side prelude: JavaScript evaluated inside each fresh QuickJS context before the script.
 * It receives three host functions in a closure and defines only `getEntity`, `writeEntity` and
 * `console` as globals, so the script never holds a host function itself.
 * @internal
 * @module
 */

/** File name under which the prelude is evaluated (shows in guest stack traces). @internal */
export const PRELUDE_FILENAME = 'stepwire:prelude';

/**
 * Source of a function expression `(hostGet, hostWrite, hostLog, namesJson) => void`, where
 * `namesJson` is `{"i":[input names],"o":[output names]}`.
 *
 * - `hostGet(name, -1)` returns the entity's JSON header
 *   `{"c":[names],"n":rows,"r":[1 or 0],"k":[kinds],"d":[dictionary, values or 0 per column]}`,
 *   where the columns with `r` 0 (kind -1) are left out: the host found the script cannot name them
 *   (see `columnsRead`). `hostGet(name, -2 - j)` returns `{"k":kind,"d":...}` of column `j`, and
 *   `hostGet(name, j)` the ArrayBuffer of column `j` (kinds 0-1: Float64Array, NaN for `null`;
 *   2: Uint32Array of indexes into the dictionary; 3: values in the header; 4: Int32Array). Rows
 *   are made here, with the columns of `r` 1; a row that reaches `writeEntity` or `console` is
 *   completed with the others first.
 * - `hostWrite(name, kind, json, ...buffers)` takes rows as one JSON string (`kind` 0: array of
 *   objects, 1: `{"c":[names],"r":[[...]]}`) or packed by column (`kind` 2: the same header as
 *   `hostGet` without `r`, then the buffers of kinds 0-2 in column order), and returns an error
 *   message or `undefined`. Rows are packed only when every row is an object without `toJSON` with
 *   exactly the first row's own enumerable keys (none an array index, order free) and only numbers, strings,
 *   booleans or `null` as values; else they go as JSON, so what the host receives is what
 *   `JSON.stringify` would make of them (objects wrapping a primitive, as `new Number(1)`, are the
 *   one exception: packed, they are read as objects).
 * - `hostLog(level, line)` returns `false` once the log cap is reached.
 *
 * Built-ins are captured first, so a script that replaces `JSON` or `Array.prototype` only
 * breaks itself.
 * @internal
 */
export const PRELUDE_SOURCE = String.raw`(function (hostGet, hostWrite, hostLog, namesJson) {
  'use strict';
  var G = globalThis;
  var parse = JSON.parse, stringify = JSON.stringify, isArray = Array.isArray, apply = Reflect.apply;
  var names = parse(namesJson), inputNames = names.i, outputNames = names.o;
  var defineProperty = Object.defineProperty, freeze = Object.freeze, create = Object.create;
  var assign = Object.assign, preventExtensions = Object.preventExtensions;
  var getPrototypeOf = Object.getPrototypeOf, objectKeys = Object.keys, ObjectProto = Object.prototype;
  var StringCtor = String, ErrorCtor = Error, TypeErrorCtor = TypeError, FunctionCtor = Function;
  var F64 = Float64Array, U32 = Uint32Array, I32 = Int32Array, ArrayCtor = Array, NaNValue = NaN;
  var MapCtor = Map, bind = Function.prototype.bind, mapGet = Map.prototype.get, mapSet = Map.prototype.set;
  var hasOwn = ObjectProto.hasOwnProperty, arraySlice = Array.prototype.slice, arrayMap = Array.prototype.map;
  var inputSet = create(null), outputSet = create(null), makers = create(null), extractors = create(null), typedExtractors = create(null), i;
  for (i = 0; i < inputNames.length; i++) inputSet[inputNames[i]] = true;
  for (i = 0; i < outputNames.length; i++) outputSet[outputNames[i]] = true;
  function list(names) { return names.length === 0 ? '(none)' : names.join(', '); }
  function quote(key) { return stringify(StringCtor(key)); }
  // The member expression reading key of the object named target: target.key where the key is an
  // identifier (QuickJS looks a quoted key up by its text each time it runs: 3x slower), else
  // target["key"].
  // Checked with string comparisons only, which no script can replace.
  function identifier(key) {
    for (var i = 0; i < key.length; i++) {
      var ch = key[i];
      if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch === '_' || ch === '$' || (i > 0 && ch >= '0' && ch <= '9'))) return false;
    }
    return key.length > 0;
  }
  function member(target, key) { return identifier(key) ? target + '.' + key : target + '[' + quote(key) + ']'; }

  // Builds, once per column list, kinds and columns read, a function that turns columns into row
  // objects with a literal of constant keys (one shape for every row, no per-cell property lookup).
  function rowMaker(columns, kinds, read) {
    var key = stringify([columns, kinds, read]);
    var made = makers[key];
    if (made !== undefined) return made;
    var locals = '', fields = '';
    for (var j = 0; j < columns.length; j++) {
      if (read[j] !== 1) continue;
      var name = columns[j], kind = kinds[j], cell;
      locals += 'var c' + j + ' = v[' + j + '], d' + j + ' = d[' + j + '];';
      if (kind === 1) cell = '(x = c' + j + '[i]) === x ? x : null';
      else if (kind === 2) cell = 'd' + j + '[c' + j + '[i]]';
      else cell = 'c' + j + '[i]';
      fields += (fields ? ',' : '') + (name === '__proto__' ? '[' + quote(name) + ']' : quote(name)) + ': ' + cell;
    }
    made = FunctionCtor('v', 'd', 'n', 'A',
      '"use strict";' + locals + 'var out = new A(n), x;for (var i = 0; i < n; i++) out[i] = {' + fields + '};return out;');
    makers[key] = made;
    return made;
  }

  // Column j of an entity: its kind, its cells and its dictionary, fetched from the host.
  function loadColumn(name, j, kind, extra, columns, dictionaries) {
    if (kind === 3) columns[j] = extra;
    else {
      columns[j] = kind === 2 ? new U32(hostGet(name, j)) : kind === 4 ? new I32(hostGet(name, j)) : new F64(hostGet(name, j));
      dictionaries[j] = extra;
    }
  }

  function getEntity(name) {
    if (typeof name !== 'string' || inputSet[name] !== true) {
      throw new ErrorCtor('entity ' + StringCtor(name) + ' is not an input of this step; inputs: ' + list(inputNames));
    }
    var data = parse(hostGet(name, -1)), kinds = data.k, read = data.r, columns = [], dictionaries = [], partial = false;
    for (var j = 0; j < kinds.length; j++) {
      if (read[j] === 1) loadColumn(name, j, kinds[j], data.d[j], columns, dictionaries);
      else partial = true;
    }
    var rows = rowMaker(data.c, kinds, read)(columns, dictionaries, data.n, ArrayCtor);
    if (partial) {
      var keys = [];
      for (j = 0; j < kinds.length; j++) if (read[j] === 1) keys[keys.length] = data.c[j];
      lazies[lazies.length] = {
        name: name, names: data.c, read: read, keys: keys, kinds: kinds, columns: columns,
        dictionaries: dictionaries, rows: apply(arraySlice, rows, []), index: undefined,
      };
    }
    return rows;
  }

  // Rows of an entity whose source names only some columns carry only those (the host found the
  // script cannot reach the others by name). A row that reaches writeEntity or console is completed
  // here: the same row with every column, in column order, then the keys the script added.
  var lazies = [];
  function completed(row) {
    for (var l = 0; l < lazies.length; l++) {
      var lazy = lazies[l];
      if (lazy.index === undefined) {
        var index = new MapCtor(), set = apply(bind, mapSet, [index]);
        for (var i = 0; i < lazy.rows.length; i++) set(lazy.rows[i], i);
        lazy.index = apply(bind, mapGet, [index]);
      }
      var at = lazy.index(row);
      if (at !== undefined) return fullRow(lazy, row, at);
    }
    return row;
  }
  function fullRow(lazy, row, i) {
    var out = {}, names = lazy.names, seen = create(null), j, k, v, x;
    for (j = 0; j < names.length; j++) {
      k = names[j];
      seen[k] = true;
      if (apply(hasOwn, row, [k])) v = row[k];
      else if (lazy.read[j] === 1) continue;
      else {
        if (lazy.kinds[j] === -1) {
          var meta = parse(hostGet(lazy.name, -2 - j));
          lazy.kinds[j] = meta.k;
          loadColumn(lazy.name, j, meta.k, meta.d, lazy.columns, lazy.dictionaries);
        }
        x = lazy.columns[j][i];
        v = lazy.kinds[j] === 2 ? lazy.dictionaries[j][x] : lazy.kinds[j] === 1 && x !== x ? null : x;
      }
      defineProperty(out, k, { value: v, writable: true, enumerable: true, configurable: true });
    }
    var own = objectKeys(row);
    for (j = 0; j < own.length; j++) {
      k = own[j];
      if (seen[k] !== true) defineProperty(out, k, { value: row[k], writable: true, enumerable: true, configurable: true });
    }
    return out;
  }
  // Whether rows with these keys may be such rows: some entity's kept keys begin them.
  function maybeLazy(keys) {
    for (var l = 0; l < lazies.length; l++) {
      var kept = lazies[l].keys, j = 0;
      if (kept.length > keys.length) continue;
      while (j < kept.length && kept[j] === keys[j]) j++;
      if (j === kept.length) return true;
    }
    return false;
  }
  function completing(key, value) {
    return value !== null && typeof value === 'object' && !isArray(value) ? completed(value) : value;
  }
  function toJson(value) {
    return lazies.length === 0 ? stringify(value) : stringify(value, completing);
  }

  // The rows' keys are checked by copying each row into a probe: a null-prototype object that has
  // exactly these keys and cannot be extended. Object.assign copies a row's own enumerable keys
  // (reading each once, as JSON.stringify would) and throws at any other key, symbols included; a
  // key the row lacks keeps the probe itself as its value, which no row can hold. One native call a
  // row, with no array made (Object.keys made one and cost twice as much).
  function probe(keys) {
    var p = create(null);
    for (var j = 0; j < keys.length; j++) p[keys[j]] = p;
    return preventExtensions(p);
  }
  // The loop both extractors share: rows that are not objects without toJSON, or whose keys are
  // not exactly the probe's, end it with null.
  function rowLoop(keys, body, done) {
    var reads = '';
    for (var j = 0; j < keys.length; j++) reads += 'v = ' + member('p', keys[j]) + '; ' + member('p', keys[j]) + ' = p;' + body(j);
    return 'var r, v;try {for (var i = 0; i < n; i++) {' +
      'r = rows[i]; if (r === null || typeof r !== "object" || r.toJSON !== undefined) return null;' +
      'copy(p, r);' + reads + '}} catch (e) { return null; } return ' + done + ';';
  }

  // Builds, once per key list, a function that checks every row is an object without toJSON whose
  // own enumerable keys are exactly these (in any order), and copies the values into one array per
  // key with a bit set per column of the value types seen (1 number, 2 string, 4 null, 8 boolean,
  // 16 other, a missing key included). No key is an array index, so no array passes.
  function extractor(keys) {
    var key = stringify(keys);
    var made = extractors[key];
    if (made !== undefined) return made;
    var locals = '', arrays = '', flags = '';
    for (var j = 0; j < keys.length; j++) {
      locals += 'var a' + j + ' = new A(n), f' + j + ' = 0;';
      arrays += (j ? ',' : '') + 'a' + j;
      flags += (j ? ',' : '') + 'f' + j;
    }
    made = FunctionCtor('rows', 'n', 'copy', 'p', 'A', '"use strict";' + locals + rowLoop(keys, function (j) {
      return 'a' + j + '[i] = v; f' + j +
        ' |= typeof v === "number" ? 1 : typeof v === "string" ? 2 : v === null ? 4 : typeof v === "boolean" ? 8 : 16;';
    }, '[[' + arrays + '], [' + flags + ']]'));
    extractors[key] = made;
    return made;
  }

  // Builds, once per key list and first-row value types, a function that checks rows as
  // extractor's do and copies the number columns straight into Float64Arrays (kind 0) and the
  // string columns into arrays; it returns null at the first row that is not such a row (a value
  // of another type included), and pack then takes the general way.
  function typedExtractor(keys, types) {
    var key = stringify([keys, types]);
    var made = typedExtractors[key];
    if (made !== undefined) return made;
    var locals = '', arrays = '';
    for (var j = 0; j < keys.length; j++) {
      locals += 'var a' + j + ' = new ' + (types[j] === 1 ? 'F' : 'A') + '(n);';
      arrays += (j ? ',' : '') + 'a' + j;
    }
    made = FunctionCtor('rows', 'n', 'copy', 'p', 'A', 'F', '"use strict";' + locals + rowLoop(keys, function (j) {
      return 'if (typeof v !== "' + (types[j] === 1 ? 'number' : 'string') + '") return null; a' + j + '[i] = v;';
    }, '[' + arrays + ']'));
    typedExtractors[key] = made;
    return made;
  }

  // Packs an array of row objects by column into the arguments of hostWrite, or returns undefined
  // when they must go as JSON. Number columns are copied into their Float64Array natively.
  function pack(name, rows, complete) {
    var n = rows.length;
    if (typeof n !== 'number' || n === 0 || rows.toJSON !== undefined || 'toJSON' in ObjectProto) return undefined;
    var first = rows[0];
    if (first === null || typeof first !== 'object' || getPrototypeOf(first) !== ObjectProto) return undefined;
    var keys = objectKeys(first), m = keys.length, j, k;
    if (complete && maybeLazy(keys)) return pack(name, apply(arrayMap, rows, [completed]), false);
    if (m === 0) return undefined;
    for (j = 0; j < m; j++) {
      k = keys[j];
      if (k === '__proto__' || k in ObjectProto || StringCtor(k >>> 0) === k) return undefined;
    }
    var types = [], typed = true, f, a, out, v;
    for (j = 0; j < m && typed; j++) {
      v = first[keys[j]];
      types[j] = typeof v === 'number' ? 1 : typeof v === 'string' ? 2 : 0;
      typed = types[j] !== 0;
    }
    var kinds = [], extra = [], buffers = [], b = 0, arrays;
    if (typed && (arrays = typedExtractor(keys, types)(rows, n, assign, probe(keys), ArrayCtor, F64)) !== null) {
      for (j = 0; j < m; j++) {
        a = arrays[j];
        if (types[j] === 1) {
          kinds[j] = 0; extra[j] = 0; buffers[b++] = a.buffer;
        } else if ((out = dictionary(a, n)) !== undefined) {
          kinds[j] = 2; extra[j] = out[0]; buffers[b++] = out[1].buffer;
        } else {
          kinds[j] = 3; extra[j] = a;
        }
      }
      return packed(name, keys, n, kinds, extra, buffers, b);
    }
    var got = extractor(keys)(rows, n, assign, probe(keys), ArrayCtor);
    if (got === null) return undefined;
    var flags = got[1];
    arrays = got[0];
    for (j = 0; j < m; j++) {
      f = flags[j]; a = arrays[j];
      if (f & 16) return undefined;
      if (f === 1) {
        out = new F64(a);
        kinds[j] = 0; extra[j] = 0; buffers[b++] = out.buffer;
      } else if (f === 5) {
        out = new F64(n);
        for (k = 0; k < n; k++) { v = a[k]; out[k] = v === null ? NaNValue : v; }
        kinds[j] = 1; extra[j] = 0; buffers[b++] = out.buffer;
      } else if ((f & 9) === 0 && (out = dictionary(a, n)) !== undefined) {
        kinds[j] = 2; extra[j] = out[0]; buffers[b++] = out[1].buffer;
      } else {
        kinds[j] = 3; extra[j] = a;
      }
    }
    return packed(name, keys, n, kinds, extra, buffers, b);
  }
  function packed(name, keys, n, kinds, extra, buffers, b) {
    var args = [name, 2, stringify({ c: keys, n: n, k: kinds, d: extra })];
    for (var j = 0; j < b; j++) args[3 + j] = buffers[j];
    return args;
  }

  // Dictionary-encodes strings and nulls, or returns undefined when too few repeat.
  function dictionary(a, n) {
    var seen = create(null), values = [], count = 0, limit = (n >>> 1) + 16, nullAt = -1;
    var indexes = new U32(n), v, x;
    for (var k = 0; k < n; k++) {
      v = a[k];
      if (v === null) {
        if (nullAt < 0) { nullAt = count; values[count++] = null; }
        x = nullAt;
      } else {
        x = seen[v];
        if (x === undefined) {
          if (count >= limit) return undefined;
          x = count; seen[v] = x; values[count++] = v;
        }
      }
      indexes[k] = x;
    }
    return [values, indexes];
  }

  function writeEntity(name, rows) {
    if (typeof name !== 'string' || outputSet[name] !== true) {
      throw new ErrorCtor('entity ' + StringCtor(name) + ' is not an output of this step; outputs: ' + list(outputNames));
    }
    var problem;
    if (isArray(rows)) {
      var packed = pack(name, rows, lazies.length > 0);
      problem = packed === undefined ? hostWrite(name, 0, toJson(rows)) : apply(hostWrite, undefined, packed);
    } else if (rows !== null && typeof rows === 'object' && isArray(rows.columns) && isArray(rows.rows)) {
      var columnNames = [];
      for (var j = 0; j < rows.columns.length; j++) {
        var column = rows.columns[j];
        columnNames.push(typeof column === 'string' ? column : column !== null && typeof column === 'object' ? column.name : column);
      }
      problem = hostWrite(name, 1, toJson({ c: columnNames, r: rows.rows }));
    } else {
      throw new TypeErrorCtor('writeEntity("' + name + '", rows): rows must be an array of objects or a data table {columns, rows}');
    }
    if (problem !== undefined) throw new ErrorCtor(problem);
  }

  var logOpen = true;
  function format(value) {
    if (typeof value === 'string') return value;
    if (value instanceof ErrorCtor) return StringCtor(value.name) + ': ' + StringCtor(value.message);
    if (typeof value === 'function' || typeof value === 'symbol' || typeof value === 'bigint') return StringCtor(value);
    try {
      var text = toJson(value);
      return text === undefined ? StringCtor(value) : text;
    } catch (e) {
      return StringCtor(value);
    }
  }
  function logger(level) {
    return function () {
      if (!logOpen) return;
      var line = '';
      for (var j = 0; j < arguments.length; j++) line += (j ? ' ' : '') + format(arguments[j]);
      if (hostLog(level, line) === false) logOpen = false;
    };
  }
  var consoleObject = freeze({
    log: logger('log'), info: logger('info'), debug: logger('log'), warn: logger('warn'), error: logger('error'),
  });
  defineProperty(G, 'getEntity', { value: getEntity, writable: false, enumerable: false, configurable: false });
  defineProperty(G, 'writeEntity', { value: writeEntity, writable: false, enumerable: false, configurable: false });
  defineProperty(G, 'console', { value: consoleObject, writable: true, enumerable: false, configurable: true });
})`;
