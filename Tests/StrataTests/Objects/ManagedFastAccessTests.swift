import XCTest
import Strata

final class EveryKind: ManagedObject {
    @Managed var double: Double = 0
    @Managed var float: Float = 0
    @Managed var int: Int = 0
    @Managed var int64: Int64 = 0
    @Managed var int32: Int32 = 0
    @Managed var int16: Int16 = 0
    @Managed var bool: Bool = false
    @Managed var string: String = ""
    @Managed var date: Date = .distantPast
    @Managed var uuid: UUID = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
    @Managed var data: Data = Data()
    @Managed var optionalDouble: Double? = nil
    @Managed var optionalInt: Int? = nil
    @Managed var optionalInt64: Int64? = nil
    @Managed var optionalBool: Bool? = nil
    @Managed var optionalString: String? = nil
    @Managed var optionalDate: Date? = nil
    @Managed var optionalUUID: UUID? = nil
    @Managed var optionalData: Data? = nil
    @Managed var decimal: Decimal = 0
}

/// The typed `@Managed` fast path (direct row conversion for common types) against the dynamic
/// `value(forKey:)` / `setValue(_:forKey:)` path, on random values, before and after a save and
/// through faults.
final class ManagedFastAccessTests: XCTestCase {
    /// One random value per property, as the dynamic path takes and returns it (nil for absent optionals).
    private func randomValues(_ random: inout SystemRandomNumberGenerator) -> [String: Any?] {
        func maybe<T>(_ value: T) -> T? { Bool.random(using: &random) ? value : nil }
        let text = String((0..<Int.random(in: 0...12, using: &random)).map { _ in "aé🙂z".randomElement(using: &random)! })
        let bytes = Data((0..<Int.random(in: 0...9, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) })
        let date = Date(timeIntervalSinceReferenceDate: Double(Int.random(in: -1_000_000...1_000_000, using: &random)) / 8)
        return [
            "double": Double.random(in: -1e9...1e9, using: &random), "float": Float.random(in: -1e3...1e3, using: &random),
            "int": Int.random(in: Int.min...Int.max, using: &random), "int64": Int64.random(in: Int64.min...Int64.max, using: &random),
            "int32": Int32.random(in: Int32.min...Int32.max, using: &random), "int16": Int16.random(in: Int16.min...Int16.max, using: &random),
            "bool": Bool.random(using: &random), "string": text, "date": date, "uuid": UUID(), "data": bytes,
            "optionalDouble": maybe(Double.random(in: -5...5, using: &random)), "optionalInt": maybe(Int.random(in: -99...99, using: &random)),
            "optionalInt64": maybe(Int64.random(in: -99...99, using: &random)), "optionalBool": maybe(Bool.random(using: &random)),
            "optionalString": maybe(text), "optionalDate": maybe(date), "optionalUUID": maybe(UUID()), "optionalData": maybe(bytes),
            "decimal": Decimal(Int.random(in: -999...999, using: &random)) / 100,
        ]
    }

    private func assign(_ values: [String: Any?], to object: EveryKind) {
        object.double = values["double"]! as! Double; object.float = values["float"]! as! Float
        object.int = values["int"]! as! Int; object.int64 = values["int64"]! as! Int64
        object.int32 = values["int32"]! as! Int32; object.int16 = values["int16"]! as! Int16
        object.bool = values["bool"]! as! Bool; object.string = values["string"]! as! String
        object.date = values["date"]! as! Date; object.uuid = values["uuid"]! as! UUID; object.data = values["data"]! as! Data
        object.optionalDouble = values["optionalDouble"]! as? Double; object.optionalInt = values["optionalInt"]! as? Int
        object.optionalInt64 = values["optionalInt64"]! as? Int64; object.optionalBool = values["optionalBool"]! as? Bool
        object.optionalString = values["optionalString"]! as? String; object.optionalDate = values["optionalDate"]! as? Date
        object.optionalUUID = values["optionalUUID"]! as? UUID; object.optionalData = values["optionalData"]! as? Data
        object.decimal = values["decimal"]! as! Decimal
    }

    private func typedValues(of object: EveryKind) -> [String: Any?] {
        ["double": object.double, "float": object.float, "int": object.int, "int64": object.int64, "int32": object.int32,
         "int16": object.int16, "bool": object.bool, "string": object.string, "date": object.date, "uuid": object.uuid,
         "data": object.data, "optionalDouble": object.optionalDouble, "optionalInt": object.optionalInt,
         "optionalInt64": object.optionalInt64, "optionalBool": object.optionalBool, "optionalString": object.optionalString,
         "optionalDate": object.optionalDate, "optionalUUID": object.optionalUUID, "optionalData": object.optionalData,
         "decimal": object.decimal]
    }

    private func assertSame(_ a: [String: Any?], _ b: [String: Any?], _ context: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(Set(a.keys), Set(b.keys), file: file, line: line)
        for (key, left) in a {
            let right = b[key]!
            XCTAssertEqual(left.map { "\($0)" }, right.map { "\($0)" }, "\(context): \(key)", file: file, line: line)
        }
    }

    func testTypedAndDynamicAccessAgreeOnRandomValues() throws {
        let model = try ManagedObjectModel(classes: [EveryKind.self])
        let (_, context) = try TestModels.stack(model)
        var random = SystemRandomNumberGenerator()
        try context.performAndWait {
            var expected: [ManagedObjectID: [String: Any?]] = [:]
            var objects: [EveryKind] = []
            for round in 0..<200 {
                let values = randomValues(&random)
                let object = EveryKind(context: context)
                if round % 2 == 0 {
                    assign(values, to: object)
                } else {
                    for (key, value) in values { object.setValue(value ?? nil, forKey: key) }
                }
                let dynamic = Dictionary(uniqueKeysWithValues: values.keys.map { ($0, object.value(forKey: $0)) })
                assertSame(typedValues(of: object), values, "typed read after set")
                assertSame(dynamic, values, "dynamic read after set")
                objects.append(object)
            }
            try context.save()
            for (object, index) in zip(objects, objects.indices) { expected[object.objectID] = typedValues(of: objects[index]) }
            context.reset()
            // Faults: the first typed read fires each one.
            for (id, values) in expected {
                let object = try XCTUnwrap(context.object(with: id) as? EveryKind)
                XCTAssertTrue(object.isFault)
                assertSame(typedValues(of: object), values, "typed read through a fault")
            }
            // Writes of the value already there change nothing.
            let first = try XCTUnwrap(context.object(with: expected.keys.first!) as? EveryKind)
            assign(typedValues(of: first), to: first)
            XCTAssertFalse(first.hasChanges)
            first.optionalString = first.optionalString == nil ? "now set" : nil
            XCTAssertTrue(first.hasChanges)
            XCTAssertEqual(Set(first.changedValues().keys), ["optionalString"])
        }
    }
}
