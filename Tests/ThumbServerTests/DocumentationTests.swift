import Foundation
import Testing
@testable import ThumbServer

/// The docs that are checked against the code: docs/configuration.md's options table is the one
/// `thumbd --help-markdown` prints (from each option's own help text), and docs/ARCHITECTURE.md
/// names every module of Package.swift.
@Suite struct DocumentationTests {
    static func read(_ relativePath: String) throws -> String {
        try String(contentsOfFile: Paths.packageRoot + "/" + relativePath, encoding: .utf8)
    }

    /// How to bring docs/configuration.md's table up to date, said by the failure.
    static let regenerate = """
        swift build && .build/debug/thumbd --help-markdown > /tmp/options.md && \
        sed -i -e '/^<!-- options:begin/,/^<!-- options:end -->/{//!d}' -e '/^<!-- options:begin/r /tmp/options.md' docs/configuration.md
        """

    @Test func theConfigurationPageHasTheGeneratedOptionsTable() throws {
        let page = try Self.read("docs/configuration.md")
        let begin = try #require(page.range(of: ConfigLoader.optionsBeginMarker + "\n"),
                                 "docs/configuration.md lacks the line \(ConfigLoader.optionsBeginMarker)")
        let end = try #require(page.range(of: "\n" + ConfigLoader.optionsEndMarker, range: begin.upperBound..<page.endIndex),
                               "docs/configuration.md lacks the line \(ConfigLoader.optionsEndMarker) after the table")
        let written = String(page[begin.upperBound..<end.lowerBound]) + "\n"
        let generated = ConfigLoader.optionsMarkdown()
        if written != generated {
            let writtenLines = written.split(separator: "\n", omittingEmptySubsequences: false)
            let generatedLines = generated.split(separator: "\n", omittingEmptySubsequences: false)
            let first = zip(writtenLines, generatedLines).enumerated().first { $0.element.0 != $0.element.1 }?.offset
                ?? min(writtenLines.count, generatedLines.count)
            let line = { (lines: [Substring]) in first < lines.count ? String(lines[first]) : "(nothing)" }
            Issue.record("""
                docs/configuration.md's options table differs from the options' help text (ConfigOption.all), \
                first at its row \(first + 1):
                  page:      \(line(writtenLines))
                  generated: \(line(generatedLines))
                Regenerate it (from the package root):
                  \(Self.regenerate)
                """)
        }
    }

    @Test func theGeneratorPrintsOneRowPerOption() {
        let rows = ConfigLoader.optionsMarkdown().split(separator: "\n").dropFirst(2)
        #expect(rows.count == ConfigOption.all.count + ConfigLoader.fileOnlyOptions.count)
        #expect(rows.first == "| `library` | `--library`, `THUMBD_LIBRARY` | (none) | text | photo library root directory (required) |")
        #expect(rows.contains("| `port` | `--port`, `THUMBD_PORT` | `8080` | integer, 0 to 65535 | TCP port (0 = any free port) |"))
    }

    @Test func thumbdHelpMarkdownPrintsTheTable() throws {
        #expect(try ConfigLoader.load(arguments: ["--help-markdown"], environment: [:]) == .help(ConfigLoader.optionsMarkdown()))
    }

    /// The `name:` of every `.target`, `.executableTarget` and `.systemLibrary` in Package.swift
    /// (test targets are optional in the architecture page).
    static func moduleNames() throws -> [String] {
        let manifest = try read("Package.swift")
        let pattern = try NSRegularExpression(pattern: #"\.(target|executableTarget|systemLibrary)\(\s*name:\s*"([^"]+)""#)
        let text = manifest as NSString
        return pattern.matches(in: manifest, range: NSRange(location: 0, length: text.length)).map {
            text.substring(with: $0.range(at: 2))
        }
    }

    @Test func theArchitecturePageNamesEveryModule() throws {
        let modules = try Self.moduleNames()
        // Package.swift's modules as this page was written: a parse that finds fewer is broken.
        #expect(modules.count >= 20, "found only \(modules) in Package.swift")
        let page = try Self.read("docs/ARCHITECTURE.md")
        let missing = modules.filter { !page.contains("`\($0)`") }
        #expect(missing.isEmpty, """
            docs/ARCHITECTURE.md does not name these targets of Package.swift (written `Name`, exactly as there): \
            \(missing.joined(separator: ", ")); add each to its modules table with its job
            """)
    }
}
