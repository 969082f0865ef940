throw new Error('@napi-rs/wasm-tools is not installed: the roomchat package builds only the native linux addon')
