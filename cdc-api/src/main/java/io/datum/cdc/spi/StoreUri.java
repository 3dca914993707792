package io.datum.cdc.spi;

import io.datum.cdc.CdcConfigurationException;
import io.datum.cdc.CheckpointStoreProvider;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * A checkpoint-store URI of the form the stores shipped with datum-cdc take: {@code
 * scheme:/absolute/path}, {@code scheme:///absolute/path} or {@code scheme:relative/path} (relative
 * to the working directory), percent-escapes decoded ({@code +} is not a space), no host, no
 * fragment, and an optional query of boolean parameters {@code name=true|false}, each at most once.
 * For a provider's {@link CheckpointStoreProvider#open}.
 */
public final class StoreUri {

  private final Path path;
  private final Map<String, Boolean> flags;

  private StoreUri(Path path, Map<String, Boolean> flags) {
    this.path = path;
    this.flags = flags;
  }

  /**
   * Parses a store URI.
   *
   * @param uri the URI, may be null (rejected)
   * @param scheme the provider's scheme, lower case, such as {@code rocksdb}
   * @param what what the path names, {@code "directory"} (a trailing {@code /} allowed) or {@code
   *     "file"}, for the checks and the messages
   * @param flags the boolean parameters the store knows, with their defaults, in the order the
   *     error messages list them
   * @param known what the messages say of the parameters, such as {@code "known parameters:
   *     sync=true|false (default true)"}
   * @return the path (absolute, or relative to the working directory) and every flag's value
   * @throws CdcConfigurationException quoting the URI if it has another scheme, a host, a fragment,
   *     no path, a bad percent-escape, or an unknown, repeated or non-boolean parameter
   */
  public static StoreUri parse(
      URI uri, String scheme, String what, Map<String, Boolean> flags, String known) {
    if (uri == null) {
      throw new CdcConfigurationException(scheme + " checkpoint store URI must not be null");
    }
    if (uri.getScheme() == null || !uri.getScheme().equalsIgnoreCase(scheme)) {
      throw invalid(uri, scheme, "the scheme must be " + scheme);
    }
    if (uri.getRawFragment() != null) {
      throw invalid(uri, scheme, "a fragment is not allowed");
    }
    String usage = "use " + scheme + ":/absolute/" + what + " or " + scheme + ":relative/" + what;
    boolean file = what.equals("file");
    String rawQuery;
    Path path;
    try {
      if (uri.isOpaque()) { // scheme:rel/path?q: java.net.URI keeps the query in the opaque part
        String part = uri.getRawSchemeSpecificPart();
        int question = part.indexOf('?');
        rawQuery = question < 0 ? null : part.substring(question + 1);
        String decoded = decode(uri, scheme, question < 0 ? part : part.substring(0, question));
        if (decoded.isEmpty() || decoded.equals("/") || (file && decoded.endsWith("/"))) {
          throw invalid(uri, scheme, "it names no " + what + "; " + usage);
        }
        path = Path.of(decoded);
      } else {
        if (uri.getRawAuthority() != null) {
          throw invalid(uri, scheme, "a host is not allowed; " + usage);
        }
        rawQuery = uri.getRawQuery();
        String decoded = uri.getPath();
        if (decoded == null
            || decoded.isEmpty()
            || decoded.equals("/")
            || (file && decoded.endsWith("/"))) {
          throw invalid(uri, scheme, "it names no " + what + "; " + usage);
        }
        // through a file: URI, so that /C:/dir becomes C:\dir on Windows
        path = Path.of(new URI("file", null, decoded, null));
      }
    } catch (URISyntaxException | IllegalArgumentException e) { // also InvalidPathException
      if (e instanceof CdcConfigurationException c) {
        throw c;
      }
      throw new CdcConfigurationException(
          "invalid " + scheme + " checkpoint store URI \"" + uri + "\": " + e.getMessage(), e);
    }
    Map<String, Boolean> values = new LinkedHashMap<>(flags);
    if (rawQuery != null && !rawQuery.isEmpty()) {
      Map<String, Boolean> given = new LinkedHashMap<>();
      for (String parameter : rawQuery.split("&", -1)) {
        int equals = parameter.indexOf('=');
        String name = decode(uri, scheme, equals < 0 ? parameter : parameter.substring(0, equals));
        if (!flags.containsKey(name)) {
          throw invalid(uri, scheme, "unknown parameter \"" + name + "\"; " + known);
        }
        if (given.containsKey(name)) {
          throw invalid(uri, scheme, "parameter \"" + name + "\" is given twice; " + known);
        }
        String value = equals < 0 ? null : decode(uri, scheme, parameter.substring(equals + 1));
        String v = value == null ? "" : value.toLowerCase(Locale.ROOT);
        if (!v.equals("true") && !v.equals("false")) {
          throw invalid(
              uri,
              scheme,
              "parameter \""
                  + name
                  + "\" must be true or false, was "
                  + (value == null ? "missing" : '"' + value + '"')
                  + "; "
                  + known);
        }
        given.put(name, v.equals("true"));
      }
      values.putAll(given);
    }
    return new StoreUri(path, values);
  }

  /** Returns the path the URI names: absolute, or relative to the working directory. */
  public Path path() {
    return path;
  }

  /**
   * Returns a boolean parameter's value.
   *
   * @param name one of the parameters given to {@link #parse}
   * @return its value in the URI, or its default
   * @throws IllegalArgumentException if {@code name} was not one of them
   */
  public boolean flag(String name) {
    Boolean value = flags.get(name);
    if (value == null) {
      throw new IllegalArgumentException("no parameter \"" + name + "\" was declared");
    }
    return value;
  }

  private static String decode(URI uri, String scheme, String raw) {
    if (raw.indexOf('%') < 0) {
      return raw;
    }
    try {
      return URLDecoder.decode(raw.replace("+", "%2B"), StandardCharsets.UTF_8);
    } catch (IllegalArgumentException e) {
      throw invalid(uri, scheme, "bad percent-escape in \"" + raw + "\"");
    }
  }

  private static CdcConfigurationException invalid(URI uri, String scheme, String why) {
    return new CdcConfigurationException(
        "invalid " + scheme + " checkpoint store URI \"" + uri + "\": " + why);
  }
}
