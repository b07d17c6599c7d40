import Foundation
import SessionProtocol
import Testing
@testable import SpeakerSyncServer

/// The served descriptions agree with what the server does: every HTTP route has an OpenAPI operation
/// and every operation a route; the AsyncAPI document names every error code and close code of the
/// WebSocket protocol. (schemathesis, run by scripts/test against a live server, checks the responses.)
struct APIDescriptionTests {
    static func object(_ bytes: [UInt8]) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
    }

    @Test func everyRouteHasAnOperationAndEveryOperationARoute() throws {
        let document = try Self.object(APIDescriptions.openAPI)
        #expect(document["openapi"] as? String == "3.1.0")
        let paths = try #require(document["paths"] as? [String: [String: Any]])
        let methods = ["get", "put", "post", "delete", "patch"]
        let described = Set(paths.flatMap { path, item in
            item.keys.filter(methods.contains).map { "\($0.uppercased()) \(path)" }
        })
        let served = Set(RouteTableTests.table.routes.map { "\($0.method.rawValue) \($0.pattern)" })
        #expect(served.subtracting(described).sorted() == [], "routes without a description")
        #expect(described.subtracting(served).sorted() == [], "descriptions without a route")

        // Each operation says what it answers, and ids are unique (generated clients name methods by them).
        var ids: [String] = []
        for (path, item) in paths {
            for method in methods {
                guard let operation = item[method] as? [String: Any] else { continue }
                let responses = try #require(operation["responses"] as? [String: Any], "\(method) \(path)")
                #expect(!responses.isEmpty, "\(method) \(path)")
                ids.append(try #require(operation["operationId"] as? String, "\(method) \(path)"))
            }
        }
        #expect(ids.count == Set(ids).count)
    }

    @Test func theWebSocketDescriptionNamesEveryErrorCodeAndCloseCode() throws {
        let document = try Self.object(APIDescriptions.asyncAPI)
        #expect(document["asyncapi"] as? String == "3.0.0")
        let text = String(decoding: APIDescriptions.asyncAPI, as: UTF8.self)
        for code in ProtocolErrorCode.allCases {
            #expect(text.contains("\"\(code.rawValue)\""), "error code \(code.rawValue)")
        }
        let closeCodes: [UInt16] = [
            CloseCode.normal, CloseCode.goingAway, CloseCode.unsupportedData, CloseCode.invalidPayload,
            CloseCode.policyViolation, CloseCode.messageTooBig, CloseCode.internalError, CloseCode.providerUnavailable,
            CloseCode.idleTimeout, CloseCode.credentialRevoked, CloseCode.tooManySessions, CloseCode.slowReader,
            CloseCode.tryAgainLater, CloseCode.resumedElsewhere,
        ]
        for code in closeCodes { #expect(text.contains(String(code)), "close code \(code)") }
        let channels = try #require(document["channels"] as? [String: [String: Any]])
        #expect(channels.values.contains { ($0["address"] as? String) == "/v1/listen" })
    }
}
