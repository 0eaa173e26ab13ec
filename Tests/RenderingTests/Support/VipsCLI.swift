import Foundation
import Rendering

/// The libvips command-line tools (`libvips-tools`), used as an independent judge: headers of
/// originals and of rendered thumbnails, pixels, and pixel differences.
enum VipsCLI {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Runs `tool arguments…` through `/usr/bin/env` and returns stdout, or nil on a non-zero exit.
    static func run(_ tool: String, _ arguments: [String]) throws -> String? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [tool] + arguments
        let stdout = Pipe()
        process.standardOutput = stdout
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = stdout.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { return nil }
        return String(decoding: data, as: UTF8.self)
    }

    /// `vipsheader -f field file`, trimmed; nil when the field is absent.
    static func field(_ name: String, of path: String) throws -> String? {
        try run("vipsheader", ["-f", name, path])?.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// An integer header field, or nil when absent.
    static func intField(_ name: String, of path: String) throws -> Int? {
        try field(name, of: path).flatMap { Int($0) }
    }

    /// Size of an original as displayed, from its `vipsheader` width, height and orientation:
    /// sides swapped for orientations 5...8; a missing orientation counts as 1 (vipsheader
    /// itself reports the invalid 0 as 1).
    static func displaySize(of path: String) throws -> (width: Int, height: Int) {
        let header = try header(of: path)
        let orientation = header.orientation ?? 1
        return (5...8).contains(orientation) ? (header.height, header.width)
                                             : (header.width, header.height)
    }

    /// The facts of a decoded image that tests check.
    struct Header: Equatable, CustomStringConvertible {
        var width: Int
        var height: Int
        var bands: Int
        var format: String          // band format, e.g. "uchar"
        var interpretation: String  // e.g. "srgb"
        var loader: String          // e.g. "jpegload"
        var pages: Int?             // n-pages when present
        var orientation: Int?       // orientation when present
        var fields: [String]        // every field name vipsheader -a lists

        var description: String {
            "\(width)x\(height) \(format) \(bands) bands \(interpretation) \(loader)"
        }
    }

    /// `vipsheader -a` of the encoded bytes, written to a temporary file first.
    static func header(ofEncoded bytes: [UInt8]) throws -> Header {
        let directory = try TestFiles.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("thumbnail")
        try Data(bytes).write(to: file)
        return try header(of: file.path)
    }

    /// `vipsheader -a file`, parsed.
    static func header(of path: String) throws -> Header {
        guard let text = try run("vipsheader", ["-a", path]) else {
            throw Failure(description: "vipsheader cannot read \(path)")
        }
        var values: [String: String] = [:]
        var names: [String] = []
        for line in text.split(separator: "\n").dropFirst() {   // first line: summary
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = String(line[..<colon])
            names.append(name)
            values[name] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        func int(_ name: String) throws -> Int {
            guard let value = values[name].flatMap({ Int($0) }) else {
                throw Failure(description: "no \(name) in vipsheader -a \(path)")
            }
            return value
        }
        return Header(width: try int("width"), height: try int("height"), bands: try int("bands"),
                      format: values["format"] ?? "", interpretation: values["interpretation"] ?? "",
                      loader: values["vips-loader"] ?? "", pages: values["n-pages"].flatMap { Int($0) },
                      orientation: values["orientation"].flatMap { Int($0) },
                      fields: names)
    }

    /// The summary line of `vipsheader` for each encoded image, all in one process:
    /// `file: 393x393 uchar, 3 bands, srgb, jpegload`.
    struct Summary: Equatable, CustomStringConvertible {
        var width: Int
        var height: Int
        var format: String
        var bands: Int
        var interpretation: String
        var loader: String

        var description: String {
            "\(width)x\(height) \(format) \(bands) bands \(interpretation) \(loader)"
        }
    }

    static func summaries(ofEncoded images: [[UInt8]]) throws -> [Summary] {
        let directory = try TestFiles.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let files = try images.enumerated().map { index, bytes in
            let file = directory.appendingPathComponent("thumbnail-\(index)")
            try Data(bytes).write(to: file)
            return file.path
        }
        guard let text = try run("vipsheader", files) else {
            throw Failure(description: "vipsheader cannot read the thumbnails")
        }
        let lines = text.split(separator: "\n")
        guard lines.count == images.count else {
            throw Failure(description: "vipsheader gave \(lines.count) lines for \(images.count) files")
        }
        return try zip(files, lines).map { file, line in
            // "<file>: WxH format, N bands, interpretation, loader"
            let parts = line.dropFirst(file.count + 2).split(separator: ",")
                .map { $0.trimmingCharacters(in: .whitespaces) }
            let size = parts.first?.split(separator: " ") ?? []
            let sides = size.first?.split(separator: "x").compactMap { Int($0) } ?? []
            guard parts.count == 4, sides.count == 2, size.count == 2,
                  let bands = Int(parts[1].split(separator: " ").first ?? "") else {
                throw Failure(description: "cannot parse vipsheader line: \(line)")
            }
            return Summary(width: sides[0], height: sides[1], format: String(size[1]), bands: bands,
                           interpretation: parts[2], loader: parts[3])
        }
    }

    /// `vips getpoint file x y`: the band values of one pixel.
    static func pixel(ofEncoded bytes: [UInt8], x: Int, y: Int) throws -> [Double] {
        let directory = try TestFiles.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("thumbnail")
        try Data(bytes).write(to: file)
        guard let text = try run("vips", ["getpoint", file.path, "\(x)", "\(y)"]) else {
            throw Failure(description: "vips getpoint failed")
        }
        return text.split(whereSeparator: \.isWhitespace).compactMap { Double($0) }
    }

    /// `vips crop in out.png 0 top width rows`: `rows` whole rows of the encoded image from
    /// `top`, as PNG (lossless, so comparisons see the image's own pixels).
    static func rows(_ bytes: [UInt8], top: Int, count rows: Int) throws -> [UInt8] {
        let directory = try TestFiles.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = directory.appendingPathComponent("in").path
        let output = directory.appendingPathComponent("out.png").path
        try Data(bytes).write(to: URL(fileURLWithPath: input))
        let width = try header(ofEncoded: bytes).width
        guard try run("vips", ["crop", input, output, "0", "\(top)", "\(width)", "\(rows)"]) != nil else {
            throw Failure(description: "vips crop failed")
        }
        return [UInt8](try Data(contentsOf: URL(fileURLWithPath: output)))
    }

    /// `vips avg` and `vips deviate` of an encoded image: the mean and the standard deviation of
    /// all its pixels' band values, 0...255.
    static func meanAndDeviation(ofEncoded bytes: [UInt8]) throws -> (mean: Double, deviation: Double) {
        let directory = try TestFiles.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("image").path
        try Data(bytes).write(to: URL(fileURLWithPath: file))
        guard let mean = try run("vips", ["avg", file]).flatMap({ Double($0.trimmingCharacters(in: .whitespacesAndNewlines)) }),
              let deviation = try run("vips", ["deviate", file]).flatMap({ Double($0.trimmingCharacters(in: .whitespacesAndNewlines)) }) else {
            throw Failure(description: "vips avg/deviate failed")
        }
        return (mean, deviation)
    }

    /// `vips flip in out.jpg horizontal|vertical`: the encoded image mirrored, as JPEG.
    static func flip(_ bytes: [UInt8], _ direction: String) throws -> [UInt8] {
        let directory = try TestFiles.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = directory.appendingPathComponent("in").path
        let output = directory.appendingPathComponent("out.jpg").path
        try Data(bytes).write(to: URL(fileURLWithPath: input))
        guard try run("vips", ["flip", input, output + "[Q=95]", direction]) != nil else {
            throw Failure(description: "vips flip failed")
        }
        return [UInt8](try Data(contentsOf: URL(fileURLWithPath: output)))
    }

    /// Mean absolute difference of two same-sized encoded images, 0...255 per band:
    /// `vips subtract`, `vips abs`, `vips avg`.
    static func meanAbsoluteDifference(_ a: [UInt8], _ b: [UInt8]) throws -> Double {
        try averageOfDifference(a, b, "abs")
    }

    /// Peak signal-to-noise ratio of two same-sized encoded images, dB (10 log10(255^2 / MSE),
    /// the mean over bands): `vips subtract`, `vips multiply` by itself, `vips avg`. Infinity when equal.
    static func psnr(_ a: [UInt8], _ b: [UInt8]) throws -> Double {
        let mse = try averageOfDifference(a, b, "square")
        return mse == 0 ? .infinity : 10 * log10(255 * 255 / mse)
    }

    /// `vips avg` of `a - b` after `operation`: "abs" (`vips abs`) or "square" (`vips multiply`
    /// of the difference by itself).
    private static func averageOfDifference(_ a: [UInt8], _ b: [UInt8], _ operation: String) throws -> Double {
        let directory = try TestFiles.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let fileA = directory.appendingPathComponent("a").path
        let fileB = directory.appendingPathComponent("b").path
        let difference = directory.appendingPathComponent("difference.v").path
        let result = directory.appendingPathComponent("result.v").path
        try Data(a).write(to: URL(fileURLWithPath: fileA))
        try Data(b).write(to: URL(fileURLWithPath: fileB))
        let step = operation == "abs" ? ["abs", difference, result] : ["multiply", difference, difference, result]
        guard try run("vips", ["subtract", fileA, fileB, difference]) != nil,
              try run("vips", step) != nil,
              let average = try run("vips", ["avg", result]),
              let value = Double(average.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw Failure(description: "vips subtract/\(step[0])/avg failed")
        }
        return value
    }
}
