package io.datum.cdc.store.mapdb.internal;

import com.google.auto.service.AutoService;
import io.datum.cdc.CdcCheckpointStore;
import io.datum.cdc.CdcConfigurationException;
import io.datum.cdc.CheckpointStoreProvider;
import io.datum.cdc.spi.StoreUri;
import io.datum.cdc.store.mapdb.MapDbCheckpointStore;
import io.datum.cdc.store.mapdb.MapDbCheckpointStore.Options;
import java.net.URI;
import java.nio.file.Path;
import java.util.Map;

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
      "known parameters: transactions=true|false (default true), mmap=true|false (default false),"
          + " create=true|false (default true; false: open only an existing store)";

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
    return MapDbCheckpointStore.open(parsed.file(), parsed.options(), parsed.create());
  }

  /** A parsed {@code mapdb:} URI. */
  record Parsed(Path file, Options options, boolean create) {}

  /**
   * Parses a {@code mapdb:} URI.
   *
   * @param uri the URI
   * @return the file (absolute, or relative to the working directory) and options
   * @throws CdcConfigurationException if the URI is malformed for this store
   */
  static Parsed parse(URI uri) {
    StoreUri parsed =
        StoreUri.parse(
            uri,
            "mapdb",
            "file",
            Map.of("transactions", true, "mmap", false, "create", true),
            KNOWN);
    return new Parsed(
        parsed.path(),
        Options.DEFAULTS
            .withTransactions(parsed.flag("transactions"))
            .withMemoryMapped(parsed.flag("mmap")),
        parsed.flag("create"));
  }
}
