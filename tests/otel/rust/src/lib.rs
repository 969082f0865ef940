//! The end-to-end test of roomchat's OpenTelemetry layer through a real
//! OpenTelemetry Collector: `tests/collector.rs`, built with the feature
//! `collector` (see `tests/otel/README.md`).
