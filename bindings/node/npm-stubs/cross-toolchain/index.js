throw new Error('@napi-rs/cross-toolchain is not installed: the roomchat package builds only the native linux addon')
