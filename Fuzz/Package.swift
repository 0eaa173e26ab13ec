// swift-tools-version:6.0
// libFuzzer target for thumbd's HTTP request parser. Build and run (see docs/performance.md, "Benchmarks, fuzzing, sanitizers"):
//   cd Fuzz && swift build -c release -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library
//   .build/release/HTTPParserFuzzer -max_total_time=600 corpus seeds
import PackageDescription

let package = Package(
    name: "thumbd-fuzz",
    dependencies: [.package(name: "thumbd", path: "..")],
    targets: [
        .executableTarget(name: "HTTPParserFuzzer", dependencies: [.product(name: "HTTP", package: "thumbd")]),
    ]
)
