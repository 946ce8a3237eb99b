// Types and client are generated from the root openapi.yaml at build time (swift-openapi-generator).
// SwiftPM needs one source file in a target for the plugin to run; nothing here is hand-written.
