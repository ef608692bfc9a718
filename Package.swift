// swift-tools-version:6.0
import PackageDescription

/// Release builds in CI add `-Xswiftc -warnings-as-errors`; every target is in Swift 6
/// language mode (the default for tools version 6.0), so strict concurrency checking is on.
///
/// Platforms: Linux only. af and AFEngine are built and tested on Debian 12 and Ubuntu
/// (glibc); nothing here has been built on macOS, so no Apple platform is claimed.
let package = Package(
    name: "af",
    products: [
        .executable(name: "af", targets: ["af"]),
        /// The engine as a library: sessions, requests, interceptors, trust, downloads.
        .library(name: "AFEngine", targets: ["AFEngine"]),
    ],
    targets: [
        .systemLibrary(
            name: "CCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"]), .brew(["curl"])]
        ),
        .systemLibrary(
            name: "COpenSSL",
            pkgConfig: "openssl",
            providers: [.apt(["libssl-dev"]), .brew(["openssl@3"])]
        ),
        .systemLibrary(
            name: "CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"])]
        ),
        // File calls the Glibc module leaves out: extended attributes, renameat2 without
        // replacing, statfs's file-system type.
        .systemLibrary(name: "CFileCalls"),
        .target(name: "AFEngine", dependencies: ["CCurl", "COpenSSL", "CZlib", "CFileCalls"], exclude: ["AFEngine.md"]),
        // Build facts for `af --version`, defined by install.sh (-Xcc -DAF_BUILD_COMMIT=...).
        .systemLibrary(name: "CBuildInfo"),
        // glibc's posix_spawn_file_actions_addclosefrom_np, which the Glibc module leaves out.
        .systemLibrary(name: "CSpawn"),
        // glibc's sched_getaffinity, which the Glibc module leaves out.
        .systemLibrary(name: "CSched"),
        .target(name: "AFCommandLine", dependencies: ["AFEngine", "CBuildInfo", "CSpawn", "CSched"]),
        // The process's arguments for CommandLine without the runtime's /proc/self/maps scan at start-up.
        .target(name: "CStartup"),
        .executableTarget(name: "af", dependencies: ["AFCommandLine", "CStartup"]),
        .executableTarget(name: "af-docs", dependencies: ["AFCommandLine"]),
        // An example that uses only the AFEngine library (built and run by the end-to-end tests).
        .executableTarget(name: "af-example-pinned-get", dependencies: ["AFEngine"], path: "Examples/PinnedGet"),
        // The fuzz targets (Fuzz/run.sh builds it with libFuzzer; plainly built it replays files).
        .executableTarget(name: "af-fuzz", dependencies: ["AFCommandLine"], path: "Fuzz/af-fuzz"),
        .target(name: "AFTestSupport", dependencies: ["COpenSSL", "CZlib"], path: "Tests/AFTestSupport"),
        .executableTarget(name: "af-test-server", dependencies: ["AFTestSupport"], path: "Tests/af-test-server"),
        // Runs the whole command in the test process, for tests that need no separate process.
        .target(name: "AFInProcess", dependencies: ["AFCommandLine", "AFTestSupport"], path: "Tests/AFInProcess"),
        .testTarget(name: "AFEngineTests", dependencies: ["AFEngine", "AFTestSupport"]),
        .testTarget(name: "AFCommandLineTests", dependencies: ["AFCommandLine", "AFEngine", "AFTestSupport", "AFInProcess"]),
        .testTarget(name: "EndToEndTests", dependencies: ["AFTestSupport", "AFInProcess", "af", "af-test-server", "af-example-pinned-get"]),
    ]
)
