package io.datum.cdc.store.rocksdb.internal;

import com.google.auto.service.AutoService;
import io.datum.cdc.CdcCheckpointStore;
import io.datum.cdc.CdcConfigurationException;
import io.datum.cdc.CheckpointStoreProvider;
import io.datum.cdc.spi.StoreUri;
import io.datum.cdc.store.rocksdb.RocksDbCheckpointStore;
import java.net.URI;
import java.nio.file.Path;
import java.util.Map;

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
          + " false: survive a process crash only), create=true|false (default true; false: open"
          + " only an existing store)";

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
    return RocksDbCheckpointStore.open(target.directory(), target.options(), target.create());
  }

  /** A parsed URI: where, and how. */
  record Target(Path directory, RocksDbCheckpointStore.Options options, boolean create) {}

  /**
   * Parses a {@code rocksdb:} URI.
   *
   * @param uri the URI
   * @return the directory (absolute, or relative to the working directory) and the options
   * @throws CdcConfigurationException if the URI is not a valid {@code rocksdb:} store URI
   */
  static Target parse(URI uri) {
    StoreUri parsed =
        StoreUri.parse(
            uri, "rocksdb", "directory", Map.of("sync", true, "create", true), KNOWN_PARAMETERS);
    return new Target(
        parsed.path(),
        RocksDbCheckpointStore.Options.defaults().withSyncWrites(parsed.flag("sync")),
        parsed.flag("create"));
  }
}
