import AFEngine

/// `config.json` in the configuration directory: `{"default_options": ["--retry=2"]}`,
/// applied before the command line. HTTPie's config file has the same form, and can be
/// copied as it is.
enum ConfigFile {
    static func path(in environment: Environment) -> String {
        environment.configDirectory + "/config.json"
    }

    /// The default options, or none when there is no config file.
    static func defaultOptions(environment: Environment) throws(CommandFailure) -> (options: [String], path: String)? {
        let path = path(in: environment)
        guard FileSystem.exists(path) else { return nil }
        let bytes = try FileReading.document(atPath: path, what: "the config file")
        let document: JSONValue
        do {
            document = try JSONValue.parse(bytes)
        } catch {
            throw .usage("the config file '\(path)' is not valid JSON: \(error.description)")
        }
        guard case .object(let members) = document else {
            throw .usage("the config file '\(path)' must hold a JSON object like {\"default_options\": [\"--follow\"]}")
        }
        var options: [String] = []
        for (key, value) in members {
            // HTTPie's bookkeeping (`{"about": …, "httpie": "3.2.4"}`), in a config file
            // copied from ~/.config/httpie: it says nothing about the request.
            if key == "__meta__" { continue }
            guard key == "default_options" else {
                throw .usage("the config file '\(path)' has an unknown key \"\(key)\"; the only key is \"default_options\"")
            }
            guard let list = value.arrayValue else {
                throw .usage("\"default_options\" in '\(path)' must be an array of strings")
            }
            for item in list {
                guard let option = item.stringValue else {
                    throw .usage("\"default_options\" in '\(path)' must be an array of strings; found \(item.text)")
                }
                // A C string ends at it: `-o "a\u0000b"` wrote to 'a'.
                guard !option.utf8.contains(0) else {
                    throw .usage("\"default_options\" in '\(path)' has '\(Quote.argument(option))', with a NUL character (\\u0000), which no command line can hold")
                }
                options.append(option)
            }
        }
        return (options, path)
    }
}
