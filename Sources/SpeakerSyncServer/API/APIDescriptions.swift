import WebSocketTransport

/// The API's machine-readable descriptions, compiled into the binary (SwiftPM `embedInCode`) and served
/// open, as the console is: `GET /openapi.json` (OpenAPI 3.1, every HTTP route) and `GET /asyncapi.json`
/// (AsyncAPI 3, the WebSocket `/v1/listen` with every message, error code and close code). The files in
/// this folder are the documents; `APIDescriptionTests` fails when a route exists without a description
/// or a description has no route, and scripts/test runs schemathesis against a live server with them.
enum APIDescriptions {
    static let openAPI: [UInt8] = PackageResources.openapi_json
    static let asyncAPI: [UInt8] = PackageResources.asyncapi_json

    static func register(in table: inout RouteTable) {
        table.add(.get, "/openapi.json", name: "openapi", access: .open) { _ in document(openAPI) }
        table.add(.get, "/asyncapi.json", name: "asyncapi", access: .open) { _ in document(asyncAPI) }
    }

    private static func document(_ bytes: [UInt8]) -> HTTPResponse {
        HTTPResponse(status: 200, contentType: "application/json", headers: [
            ("x-content-type-options", "nosniff"), ("cache-control", "no-cache"),
        ], body: bytes)
    }
}
