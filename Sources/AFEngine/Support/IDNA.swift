/// Host names written in Unicode (`bücher.example`) turned into the ASCII form that DNS, TLS
/// certificates and the `Host` header use (`bcher-kva` after the `xn--` prefix), as
/// browsers, curl (with libidn2) and HTTPie do.
///
/// The mapping is the part of UTS #46 (non-transitional) that host names typed or pasted by
/// people need: full-width ASCII and the ideographic full stops become their ASCII forms,
/// letters are lower-cased, the result is put in Unicode normalisation form C, and every
/// label that is not ASCII becomes `xn--` and its Punycode. Labels that are ASCII already are
/// left as they are. It does not refuse the characters IDNA 2008 disallows (symbols such as
/// `☃` are encoded, as browsers do); the name server decides whether such a name exists.
///
/// libcurl would convert the name itself, but through libidn2's locale-dependent entry point:
/// in a process that never called `setlocale` (af does not) every non-ASCII name failed as
/// "URL using bad/illegal format".
package enum IDNA {
    /// The longest label DNS carries, in bytes.
    package static let maximumLabelLength = 63

    package enum Failure: Error, Equatable {
        /// A label longer than DNS allows once encoded: the label as given, and its encoded length.
        case labelTooLong(String, Int)
    }

    /// `host` in its ASCII form; an ASCII host comes back unchanged.
    package static func asciiHost(_ host: String) -> Result<String, Failure> {
        guard !host.utf8.allSatisfy({ $0 < 0x80 }) else { return .success(host) }
        var labels: [String] = []
        for label in mapped(host).split(separator: ".", omittingEmptySubsequences: false) {
            let scalars = Array(label.unicodeScalars)
            guard !scalars.allSatisfy(\.isASCII) else {
                labels.append(String(label))
                continue
            }
            let encoded = Punycode.encode(scalars).map { "xn--" + $0 }
            guard let encoded, encoded.utf8.count <= maximumLabelLength else {
                return .failure(.labelTooLong(String(label), encoded?.utf8.count ?? Int.max))
            }
            labels.append(encoded)
        }
        return .success(labels.joined(separator: "."))
    }

    /// The form host names are compared in (netrc machines, trust policy patterns, resolve
    /// entries against a URL's host): the ASCII form, lower-cased. A name that cannot be
    /// converted (a label too long for DNS) is compared as given, lower-cased.
    package static func comparable(_ host: String) -> String {
        ((try? asciiHost(host).get()) ?? host).lowercased()
    }

    /// The form a name is looked up in where the host, not its spelling, decides what af
    /// trusts or sends (trust policy patterns, netrc machines): `comparable`, without the
    /// trailing dot of a fully qualified name. `example.com.` is `example.com` to DNS and to
    /// the certificate check, so a policy's pins for `example.com` hold for it too (they were
    /// skipped, the name matching no pattern).
    package static func hostKey(_ host: String) -> String {
        comparable(host.utf8.count > 1 && host.hasSuffix(".") ? String(host.dropLast()) : host)
    }

    /// A `no_proxy` list (names separated by commas, each may start with a dot) with every
    /// name that is not ASCII in its ASCII form, so that libcurl, which compares the list with
    /// the ASCII host af gives it, matches `bücher.example` to its `xn--` form. An ASCII
    /// list comes back unchanged; a name that cannot be converted stays as given.
    package static func asciiHostList(_ list: String) -> String {
        guard !list.utf8.allSatisfy({ $0 < 0x80 }) else { return list }
        return list.split(separator: ",", omittingEmptySubsequences: false).map { entry -> String in
            guard !entry.utf8.allSatisfy({ $0 < 0x80 }) else { return String(entry) }
            let name = entry.drop(while: { $0 == " " || $0 == "\t" || $0 == "." })
            let prefix = entry[entry.startIndex..<name.startIndex]
            let trimmed = name.reversed().drop(while: { $0 == " " || $0 == "\t" }).reversed()
            guard case .success(let ascii) = asciiHost(String(trimmed)) else { return String(entry) }
            return prefix + ascii
        }.joined(separator: ",")
    }

    /// Full-width ASCII and the ideographic full stops as ASCII, then lower case, then NFC.
    private static func mapped(_ host: String) -> String {
        var scalars = String.UnicodeScalarView()
        for scalar in host.unicodeScalars {
            switch scalar.value {
            case 0x3002, 0xFF0E, 0xFF61:  // 。 ． ｡
                scalars.append(".")
            case 0xFF01...0xFF5E:  // ！ to ～
                scalars.append(Unicode.Scalar(scalar.value - 0xFEE0) ?? scalar)
            default:
                scalars.append(scalar)
            }
        }
        // `_nfcCodeUnits` is the standard library's public (if underscored) NFC normaliser;
        // nothing else in the toolchain normalises without Foundation.
        return String(decoding: String(scalars).lowercased()._nfcCodeUnits, as: UTF8.self)
    }
}
