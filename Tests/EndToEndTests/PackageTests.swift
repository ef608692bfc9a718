import AFTestSupport
import Foundation
import Testing

/// Where `./install.sh --package` put the artifacts (`AF_PACKAGE_DIR`), if anywhere.
let packageDirectory = ProcessInfo.processInfo.environment["AF_PACKAGE_DIR"].flatMap { $0.isEmpty ? nil : $0 }

/// Issue 15: the .deb and the tarball that `./install.sh --package` builds, checked as a user
/// gets them: metadata, contents, an extracted binary that answers `--version` and makes a
/// real request, no path of the build machine inside. CI builds the packages and points
/// `AF_PACKAGE_DIR` at them; without it these tests are skipped.
@Suite(.enabled(if: packageDirectory != nil, "set AF_PACKAGE_DIR to the output of ./install.sh --package (CI does)"))
struct PackageTests {
    static let root = ShellCompletionTests.root

    let server: TestServer
    let packages: String

    init() throws {
        server = try TestServer()
        packages = try #require(packageDirectory)
    }

    private func run(_ executable: String, _ arguments: [String], directory: String? = nil) throws -> (output: String, status: Int32) {
        try Command.run(executable, arguments, directory: directory)
    }

    private func artifact(suffix: String) throws -> String {
        let names = try FileManager.default.contentsOfDirectory(atPath: packages).filter { $0.hasSuffix(suffix) }
        #expect(names.count == 1, "\(names)")
        return packages + "/" + (try #require(names.first))
    }

    /// The installed af answers --version and fetches from the test server.
    private func checkBinary(_ path: String) throws {
        let version = try run(path, ["--version"])
        #expect(version.status == 0)
        #expect(version.output.hasPrefix("af "))
        #expect(version.output.contains("built from commit "))
        #expect(!version.output.contains("commit unknown"))
        #expect(version.output.contains("with Swift 6"))
        #expect(version.output.contains("libcurl "))
        let request = try run(path, [server.url("/get")])
        #expect(request.status == 0, "\(request.output)")
        #expect(request.output.hasPrefix("{\"method\": \"GET\", \"target\": \"/get\""), "\(request.output)")
        let json = try run(path, ["--pretty=format", server.url("/json")])
        #expect(json.output.contains("\"big\": 123456789012345678901234567890"))
        // The static binary takes its arguments from CStartup, not the Swift runtime's
        // stack search: every one arrives whole (spaces, UTF-8, an empty value).
        let items = try run(path, ["--offline", "--print=B", "POST", "http://x/", "name=café au lait", "empty=", "n:=1"])
        #expect(items.output == #"{"name": "café au lait", "empty": "", "n": 1}"#, "\(items.output)")
        let strings = try run("strings", [path])
        #expect(!strings.output.contains(Self.root), "the binary names the build directory")
        let sections = try run("readelf", ["-S", path])
        #expect(!sections.output.contains(".debug_"), "debug sections are stripped")
        #expect(!sections.output.contains(".symtab"), "the symbol table is stripped")
        // Start-up (Build/link-flags, Build/order-needed): no libgcc_s or libstdc++ to load,
        // and libcurl's tree named in the binary in lookup order, which puts the C library
        // (thousands of lookups) ahead of libcurl itself (a few dozen).
        let needed = try run("readelf", ["-d", path]).output.split(separator: "\n")
            .filter { $0.contains("(NEEDED)") }.compactMap { $0.split(separator: "[").last?.dropLast() }.map(String.init)
        #expect(!needed.contains { $0.hasPrefix("libgcc_s") || $0.hasPrefix("libstdc++") }, "\(needed)")
        let libc = try #require(needed.firstIndex(of: "libc.so.6"), "\(needed)")
        let libcurl = try #require(needed.firstIndex(of: "libcurl.so.4"), "\(needed)")
        #expect(libc < libcurl, "\(needed)")
    }

    @Test func debianPackage() throws {
        let deb = try artifact(suffix: ".deb")
        let info = try run("dpkg-deb", ["--info", deb])
        #expect(info.status == 0)
        for field in ["Package: af", "Version: ", "Architecture: ", "Maintainer: ", "Installed-Size: ", "Section: web", "Description: "] {
            #expect(info.output.contains(field), "\(field) in \(info.output)")
        }
        let depends = try #require(info.output.split(separator: "\n").first { $0.trimmingCharacters(in: .whitespaces).hasPrefix("Depends:") })
        for library in ["libc6", "libcurl4", "libssl3", "zlib1g"] {
            #expect(depends.contains(library), "\(depends)")
        }
        let contents = try run("dpkg-deb", ["--contents", deb])
        for path in ["./usr/bin/af", "./usr/share/man/man1/af.1.gz", "./usr/share/bash-completion/completions/af",
                     "./usr/share/zsh/vendor-completions/_af", "./usr/share/fish/vendor_completions.d/af.fish",
                     "./usr/share/doc/af/copyright", "./usr/share/doc/af/changelog.gz"] {
            #expect(contents.output.contains(path), "\(path)")
        }
        for line in contents.output.split(separator: "\n") {
            #expect(line.contains("root/root"), "owned by root: \(line)")
            if line.hasSuffix("/usr/bin/af") { #expect(line.hasPrefix("-rwxr-xr-x")) }
            if line.contains("/usr/share/") && !line.hasPrefix("d") { #expect(line.hasPrefix("-rw-r--r--"), "\(line)") }
        }
        let extracted = try TemporaryDirectory.make(prefix: "af-deb")
        #expect(try run("dpkg-deb", ["-x", deb, extracted]).status == 0)
        try checkBinary(extracted + "/usr/bin/af")
        // A binary with packed relative relocations starts only on glibc 2.36 or later, which
        // dpkg-shlibdeps cannot see; the package must say so itself.
        if try run("readelf", ["-d", extracted + "/usr/bin/af"]).output.contains("(RELR)") {
            #expect(depends.contains("libc6 (>= 2.36)"), "\(depends)")
        }
        let copyright = try String(contentsOfFile: extracted + "/usr/share/doc/af/copyright", encoding: .utf8)
        #expect(copyright.contains("License: Apache-2.0"))
        let man = try run("sh", ["-c", "gzip -dc '\(extracted)/usr/share/man/man1/af.1.gz' | head -c 200"])
        #expect(man.output.contains(".TH AF 1"))
    }

    @Test func tarballInstallsWithoutSwift() throws {
        let tarball = try artifact(suffix: ".tar.gz")
        let unpacked = try TemporaryDirectory.make(prefix: "af-tar")
        #expect(try run("tar", ["-xzf", tarball, "-C", unpacked]).status == 0)
        let top = try #require(try FileManager.default.contentsOfDirectory(atPath: unpacked).first)
        #expect(top.hasPrefix("af-") && top.contains("-linux-"))
        let listing = try run("tar", ["-tzvf", tarball])
        #expect(listing.output.contains("\(top)/LICENSE"))
        #expect(listing.output.split(separator: "\n").allSatisfy { $0.contains("0/0") || $0.contains("root/root") }, "\(listing.output)")
        let prefix = try TemporaryDirectory.make(prefix: "af-prefix")
        let install = try run(unpacked + "/" + top + "/install.sh", ["--prefix", prefix])
        #expect(install.status == 0, "\(install.output)")
        for path in ["bin/af", "share/man/man1/af.1", "share/bash-completion/completions/af", "share/zsh/site-functions/_af",
                     "share/fish/vendor_completions.d/af.fish"] {
            #expect(FileManager.default.fileExists(atPath: prefix + "/" + path), "\(path)")
        }
        try checkBinary(prefix + "/bin/af")
    }

    @Test func checksumsCoverBoth() throws {
        let sums = try String(contentsOfFile: packages + "/SHA256SUMS", encoding: .utf8)
        #expect(sums.split(separator: "\n").count == 2)
        #expect(sums.contains(".deb") && sums.contains(".tar.gz"))
        let check = try run("sha256sum", ["-c", "SHA256SUMS"], directory: packages)
        #expect(check.status == 0, "\(check.output)")
    }
}
