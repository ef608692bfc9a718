// swift-tools-version:6.0
// The batch benchmark's "engine alone" row: the requests of `af batch`, made with nothing
// but the AFEngine library (no command-line parsing, printing or ordering), to tell the
// engine's cost from the command line's. Benchmarks/run.sh builds and runs it.
import PackageDescription

let package = Package(
    name: "EngineBatch",
    dependencies: [.package(name: "af", path: "../..")],
    targets: [
        .executableTarget(name: "EngineBatch", dependencies: [.product(name: "AFEngine", package: "af")]),
    ]
)
