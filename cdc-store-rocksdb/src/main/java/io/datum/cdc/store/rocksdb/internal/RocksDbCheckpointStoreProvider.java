package io.datum.cdc.store.rocksdb.internal;

import com.google.auto.service.AutoService;
import io.datum.cdc.CdcCheckpointStore;
import io.datum.cdc.CdcConfigurationException;
import io.datum.cdc.spi.CheckpointStoreProvider;
import io.datum.cdc.store.rocksdb.RocksDbCheckpointStore;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Locale;
import java.util.Set;

/**
 * Provides {@code rocksdb:} stores: {@code rocksdb:/var/lib/app/cdc-rocks} (absolute), {@code
 * rocksdb:///var/lib/app/cdc-rocks}, or {@code rocksdb:rel/dir} (relative to the working
 * directory), each optionally followed by {@code ?sync=true} (the default: fsync the write-ahead
 * log for every batch, durable after a power loss) or {@code ?sync=false} (survives a process crash
 * only). Percent-escapes in the path are decoded. Not API; use {@link
 * io.datum.cdc.CheckpointStores#open(URI)} or {@link RocksDbCheckpointStore#open}.
 */
@AutoService(CheckpointStoreProvider.class)
public final class RocksDbCheckpointStoreProvider implements CheckpointStoreProvider {

  private static final String KNOWN_PARAMETERS =
      "known parameters: sync=true|false (default true: fsync the write-ahead log for every batch;"
          + " false: survive a process crash only)";

  /** Called by {@link java.util.ServiceLoader}. */
  public RocksDbCheckpointStoreProvider() {}

  /** Returns {@code rocksdb}. */
  @Override
  public String scheme() {
    return "rocksdb";
  }

  /** Returns a one-line description of the URI form. */
  @Override
  public String description() {
    return "rocksdb:/dir[?sync=true|false] - one RocksDB database for every slot, write-ahead log"
        + " fsynced per group-commit batch unless sync=false (cdc-store-rocksdb)";
  }

  /**
   * Opens a {@link RocksDbCheckpointStore} on the directory the URI names, with the options its
   * query gives.
   *
   * @param uri a {@code rocksdb:} URI naming a directory, without host or fragment, with an
   *     optional query {@code sync=true|false}
   * @return the open store
   * @throws CdcConfigurationException if the URI is not of that form, or has an unknown, repeated
   *     or malformed parameter (the message quotes the URI and lists the known parameters)
   * @throws io.datum.cdc.CdcStoreException as {@link RocksDbCheckpointStore#open(Path,
   *     RocksDbCheckpointStore.Options)}
   */
  @Override
  public CdcCheckpointStore open(URI uri) {
    Target target = parse(uri);
    return RocksDbCheckpointStore.open(target.directory(), target.options());
  }

  /** A parsed URI: where, and how. */
  record Target(Path directory, RocksDbCheckpointStore.Options options) {}

  /**
   * Parses a {@code rocksdb:} URI.
   *
   * @param uri the URI
   * @return the directory (absolute, or relative to the working directory) and the options
   * @throws CdcConfigurationException if the URI is not a valid {@code rocksdb:} store URI
   */
  static Target parse(URI uri) {
    if (uri == null) {
      throw new CdcConfigurationException("rocksdb checkpoint store URI must not be null");
    }
    if (uri.getScheme() == null || !uri.getScheme().equalsIgnoreCase("rocksdb")) {
      throw invalid(uri, "the scheme must be rocksdb");
    }
    if (uri.getRawFragment() != null) {
      throw invalid(uri, "a fragment is not allowed");
    }
    String rawQuery;
    Path directory;
    try {
      if (uri.isOpaque()) { // rocksdb:rel/dir?sync=false; URI keeps the query in the opaque part
        String ssp = uri.getRawSchemeSpecificPart();
        int question = ssp.indexOf('?');
        rawQuery = question < 0 ? null : ssp.substring(question + 1);
        String path = decode(uri, question < 0 ? ssp : ssp.substring(0, question));
        if (path.isEmpty()) {
          throw invalid(
              uri, "it names no directory; use rocksdb:/absolute/dir or rocksdb:relative/dir");
        }
        directory = Path.of(path);
      } else {
        if (uri.getRawAuthority() != null) {
          throw invalid(
              uri, "a host is not allowed; use rocksdb:/absolute/dir or rocksdb:relative/dir");
        }
        rawQuery = uri.getRawQuery();
        String path = uri.getPath();
        if (path == null || path.isEmpty() || path.equals("/")) {
          throw invalid(
              uri, "it names no directory; use rocksdb:/absolute/dir or rocksdb:relative/dir");
        }
        // through a file: URI, so that /C:/dir becomes C:\dir on Windows
        directory = Path.of(new URI("file", null, path, null));
      }
    } catch (URISyntaxException | IllegalArgumentException e) { // also InvalidPathException
      throw new CdcConfigurationException(
          "invalid rocksdb checkpoint store URI \"" + uri + "\": " + e.getMessage(), e);
    }
    return new Target(directory, options(uri, rawQuery));
  }

  private static RocksDbCheckpointStore.Options options(URI uri, String rawQuery) {
    RocksDbCheckpointStore.Options options = RocksDbCheckpointStore.Options.defaults();
    if (rawQuery == null || rawQuery.isEmpty()) {
      return options;
    }
    Set<String> seen = new HashSet<>();
    for (String parameter : rawQuery.split("&", -1)) {
      int equals = parameter.indexOf('=');
      String name = decode(uri, equals < 0 ? parameter : parameter.substring(0, equals));
      if (name.isEmpty()) {
        throw invalid(uri, "empty parameter in the query; " + KNOWN_PARAMETERS);
      }
      if (!seen.add(name)) {
        throw invalid(uri, "parameter \"" + name + "\" is given twice; " + KNOWN_PARAMETERS);
      }
      if (!name.equals("sync")) {
        throw invalid(uri, "unknown parameter \"" + name + "\"; " + KNOWN_PARAMETERS);
      }
      if (equals < 0) {
        throw invalid(uri, "parameter \"sync\" needs a value, true or false; " + KNOWN_PARAMETERS);
      }
      String value = decode(uri, parameter.substring(equals + 1));
      switch (value.toLowerCase(Locale.ROOT)) {
        case "true":
          options = options.withSyncWrites(true);
          break;
        case "false":
          options = options.withSyncWrites(false);
          break;
        default:
          throw invalid(
              uri,
              "parameter \"sync\" must be true or false, was \""
                  + value
                  + "\"; "
                  + KNOWN_PARAMETERS);
      }
    }
    return options;
  }

  /** Decodes percent-escapes (UTF-8), as {@link URI#getPath()} does. */
  private static String decode(URI uri, String raw) {
    if (raw.indexOf('%') < 0) {
      return raw;
    }
    try {
      // '+' is not a space in a URI
      return URLDecoder.decode(raw.replace("+", "%2B"), StandardCharsets.UTF_8);
    } catch (IllegalArgumentException e) {
      throw invalid(uri, "bad percent-escape in \"" + raw + "\"");
    }
  }

  private static CdcConfigurationException invalid(URI uri, String why) {
    return new CdcConfigurationException(
        "invalid rocksdb checkpoint store URI \"" + uri + "\": " + why);
  }
}
