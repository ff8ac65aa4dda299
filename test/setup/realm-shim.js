// Jest runs each test file in a VM context whose Map and Set differ from those of objects made
// by Node's own realm. MikroORM clones its entity metadata with `instanceof Map` checks, and a
// Map from the other realm is then copied as a broken plain object ("Method Map.prototype.set
// called on incompatible receiver", mikro-orm/mikro-orm#3783, #4517). Make `instanceof Map/Set`
// realm-independent inside tests only; production code runs in one realm and never needs this.
const { types } = require('node:util');

Object.defineProperty(Map, Symbol.hasInstance, { value: (value) => types.isMap(value) });
Object.defineProperty(Set, Symbol.hasInstance, { value: (value) => types.isSet(value) });
