package io.datum.cdc.store.mapdb.internal;

import com.google.auto.service.AutoService;
import io.datum.cdc.CdcCheckpointStore;
import io.datum.cdc.CdcConfigurationException;
import io.datum.cdc.spi.CheckpointStoreProvider;
import io.datum.cdc.store.mapdb.MapDbCheckpointStore;
import io.datum.cdc.store.mapdb.MapDbCheckpointStore.Options;
import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Locale;
import java.util.Set;

/**
 * Provides {@code mapdb:} stores. The URI names the MapDB <em>file</em> that holds every slot:
 * {@code mapdb:/var/lib/app/cdc.mapdb} (absolute), {@code mapdb:///var/lib/app/cdc.mapdb}, or
 * {@code mapdb:data/cdc.mapdb} (relative to the working directory), optionally with the query
 * parameters {@code transactions=true|false} (default true, see {@link Options#transactions()}) and
 * {@code mmap=true|false} (default false, see {@link Options#memoryMapped()}), such as {@code
 * mapdb:/var/lib/app/cdc.mapdb?mmap=true}. Not API; use {@link
 * io.datum.cdc.CheckpointStores#open(URI)} or {@link MapDbCheckpointStore#open}.
 */
@AutoService(CheckpointStoreProvider.class)
public final class MapDbCheckpointStoreProvider implements CheckpointStoreProvider {

  private static final String KNOWN =
      "known parameters: transactions=true|false (default true), mmap=true|false (default false)";

  /** Called by {@link java.util.ServiceLoader}. */
  public MapDbCheckpointStoreProvider() {}

  /** Returns {@code mapdb}. */
  @Override
  public String scheme() {
    return "mapdb";
  }

  /** Returns a one-line description of the URI form. */
  @Override
  public String description() {
    return "mapdb:/path/file.mapdb[?transactions=true|false&mmap=true|false] - every slot in MapDB files,"
        + " crash-safe with transactions=true (the default) (cdc-store-mapdb)";
  }

  /**
   * Opens a {@link MapDbCheckpointStore} on the file the URI names, with the options its query
   * sets.
   *
   * @param uri a {@code mapdb:} URI naming a file, without host or fragment
   * @return the open store
   * @throws CdcConfigurationException if the URI is not of that form, or has an unknown parameter
   *     or a bad value (the message quotes the URI and lists the known parameters)
   * @throws io.datum.cdc.CdcStoreException as {@link MapDbCheckpointStore#open(Path, Options)}
   */
  @Override
  public CdcCheckpointStore open(URI uri) {
    Parsed parsed = parse(uri);
    return MapDbCheckpointStore.open(parsed.file(), parsed.options());
  }

  /** A parsed {@code mapdb:} URI. */
  record Parsed(Path file, Options options) {}

  /**
   * Parses a {@code mapdb:} URI.
   *
   * @param uri the URI
   * @return the file (absolute, or relative to the working directory) and options
   * @throws CdcConfigurationException if the URI is malformed for this store
   */
  static Parsed parse(URI uri) {
    if (uri == null || uri.getScheme() == null || !uri.getScheme().equalsIgnoreCase("mapdb")) {
      throw invalid(uri, "the scheme must be mapdb");
    }
    if (uri.getRawFragment() != null) {
      throw invalid(uri, "a fragment is not allowed");
    }
    String path;
    String query;
    if (uri.isOpaque()) { // mapdb:relative/file?query: java.net.URI keeps the query in the part
      String part = uri.getRawSchemeSpecificPart();
      int q = part.indexOf('?');
      path = decode(uri, q < 0 ? part : part.substring(0, q));
      query = q < 0 ? null : part.substring(q + 1);
    } else {
      if (uri.getRawAuthority() != null) {
        throw invalid(
            uri,
            "a host is not allowed; use mapdb:/absolute/file.mapdb or mapdb:relative/file.mapdb");
      }
      path = uri.getPath();
      query = uri.getRawQuery();
    }
    if (path == null || path.isEmpty() || path.endsWith("/")) {
      throw invalid(
          uri, "it names no file; use mapdb:/absolute/file.mapdb or mapdb:relative/file.mapdb");
    }
    Options options = Options.DEFAULTS;
    if (query != null) {
      Set<String> seen = new HashSet<>();
      for (String parameter : query.split("&", -1)) {
        int eq = parameter.indexOf('=');
        String name = decode(uri, eq < 0 ? parameter : parameter.substring(0, eq));
        String value = eq < 0 ? null : decode(uri, parameter.substring(eq + 1));
        if (!name.equals("transactions") && !name.equals("mmap")) {
          throw invalid(uri, "unknown parameter \"" + name + "\"; " + KNOWN);
        }
        if (!seen.add(name)) {
          throw invalid(uri, "parameter \"" + name + "\" is given twice; " + KNOWN);
        }
        boolean flag = bool(uri, name, value);
        options =
            name.equals("transactions")
                ? options.withTransactions(flag)
                : options.withMemoryMapped(flag);
      }
    }
    try {
      return new Parsed(Path.of(path), options);
    } catch (InvalidPathException e) {
      throw new CdcConfigurationException(
          "invalid mapdb checkpoint store URI \"" + uri + "\": " + e.getMessage(), e);
    }
  }

  private static boolean bool(URI uri, String name, String value) {
    String v = value == null ? "" : value.toLowerCase(Locale.ROOT);
    if (v.equals("true")) {
      return true;
    }
    if (v.equals("false")) {
      return false;
    }
    throw invalid(
        uri,
        "parameter \""
            + name
            + "\" must be true or false, was "
            + (value == null ? "missing" : '"' + value + '"')
            + "; "
            + KNOWN);
  }

  private static String decode(URI uri, String text) {
    try {
      return URLDecoder.decode(text.replace("+", "%2B"), StandardCharsets.UTF_8);
    } catch (IllegalArgumentException e) {
      throw invalid(uri, "bad percent-encoding in \"" + text + "\"");
    }
  }

  private static CdcConfigurationException invalid(URI uri, String why) {
    return new CdcConfigurationException(
        "invalid mapdb checkpoint store URI \"" + uri + "\": " + why);
  }
}
