import XCTest
@testable import TLS

final class SharedTLSValuesTests: XCTestCase {
    private func storage<T>(_ array: [T]) -> UnsafeRawPointer? {
        array.withUnsafeBufferPointer { UnsafeRawPointer($0.baseAddress) }
    }

    /// The usual values come back equal and sharing one storage; others come back as given.
    func testUsualValuesAreSharedAndOthersReturnedAsGiven() {
        let offer = ["h2", "http/1.1"].map { String($0) }
        let shared = SharedTLSValues.shared(offer)
        XCTAssertEqual(shared, offer)
        XCTAssertEqual(storage(shared), storage(SharedTLSValues.shared(["h2", "http/1.1"])))
        XCTAssertNotEqual(storage(shared), storage(offer))
        let unusual = ["spdy/3", "http/1.1"]
        XCTAssertEqual(storage(SharedTLSValues.shared(unusual)), storage(unusual))
        XCTAssertEqual(SharedTLSValues.shared([UInt16]([0x0304, 0x0303])), [0x0304, 0x0303])
        XCTAssertEqual(storage(SharedTLSValues.shared([UInt16]([0x0304, 0x0303]))),
                       storage(SharedTLSValues.shared([UInt16]([0x0304, 0x0303]))))
        XCTAssertEqual(SharedTLSValues.shared([UInt16]([0x7f1c])), [0x7f1c])
        XCTAssertEqual(SharedTLSValues.shared([String]()), [])
    }

    func testCipherNamesMatchTheCString() {
        for name in ["TLS_AES_256_GCM_SHA384", "TLS_AES_128_CCM_SHA256", "TLS_AES_256_GCM_SHA38", ""] {
            XCTAssertEqual(name.withCString { SharedTLSValues.cipherName($0) }, name)
        }
    }
}
