package io.datum.cdc.cli.common;

import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Path;

/** What pgcdc's commands read from a checkpoint store URI without opening the store. */
public final class StoreUris {

  private StoreUris() {}

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
