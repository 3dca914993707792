package io.datum.cdc.cli.common;

import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Path;

/** What pgcdc's commands read from a checkpoint store URI without opening the store. */
public final class StoreUris {

  private StoreUris() {}

  /**
   * Returns the URI with which a command that must not create anything opens a store: a {@code
   * jdbc:} store's with {@code create=false} in its fragment, a {@code rocksdb:} or {@code mapdb:}
   * store's with {@code create=false} in its query (unless the URI says otherwise), so that a
   * mistyped table is reported missing, not created empty, and nothing is written into a path that
   * holds no store; any other URI as it is.
   *
   * @param uri a store URI, not null
   * @return the URI to open
   */
  public static String existingOnly(String uri) {
    if (uri.regionMatches(true, 0, "rocksdb:", 0, 8)
        || uri.regionMatches(true, 0, "mapdb:", 0, 6)) {
      int query = uri.indexOf('?');
      if (query < 0) {
        return uri + "?create=false";
      }
      for (String part : uri.substring(query + 1).split("&")) {
        if (part.startsWith("create=")) {
          return uri;
        }
      }
      return uri + (query == uri.length() - 1 ? "" : "&") + "create=false";
    }
    if (!uri.regionMatches(true, 0, "jdbc:", 0, 5)) {
      return uri;
    }
    int hash = uri.indexOf('#');
    if (hash < 0) {
      return uri + "#create=false";
    }
    for (String part : uri.substring(hash + 1).split("&")) {
      if (part.startsWith("create=")) {
        return uri;
      }
    }
    return uri + (hash == uri.length() - 1 ? "" : "&") + "create=false";
  }

  /**
   * Returns the directory of a {@code file:} store URI, or null for other schemes (or a URI the
   * store itself should reject, with its own message).
   */
  public static Path fileStoreDirectory(String uri) {
    URI parsed;
    try {
      parsed = new URI(uri);
    } catch (URISyntaxException e) {
      return null;
    }
    if (parsed.getScheme() == null
        || !parsed.getScheme().equalsIgnoreCase("file")
        || parsed.getRawQuery() != null
        || parsed.getRawFragment() != null
        || parsed.getRawAuthority() != null) {
      return null;
    }
    try {
      return (parsed.isOpaque() ? Path.of(parsed.getSchemeSpecificPart()) : Path.of(parsed))
          .toAbsolutePath();
    } catch (IllegalArgumentException e) {
      return null;
    }
  }
}
