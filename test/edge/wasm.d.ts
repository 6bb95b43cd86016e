// The QuickJS WebAssembly file as a module import, as Cloudflare Workers (and the edge test) load it.
declare module '@jitl/quickjs-wasmfile-release-sync/wasm' {
  const wasm: WebAssembly.Module;
  export default wasm;
}
