package io.datum.cdc;

import java.net.URI;

/**
 * Creates {@link CdcCheckpointStore}s for one URI scheme. Implementations are found by {@link
 * java.util.ServiceLoader} (register with {@code @AutoService(CheckpointStoreProvider.class)} or a
 * {@code META-INF/services/io.datum.cdc.CheckpointStoreProvider} file) and picked by {@link
 * io.datum.cdc.CheckpointStores#open(URI)} through {@link #scheme()}.
 *
 * <p>A provider needs a public no-argument constructor. It must not depend on {@code cdc-core}.
 */
public interface CheckpointStoreProvider {

  /**
   * Returns the URI scheme this provider handles, such as {@code file} or {@code rocksdb}:
   * lower-case, unique among the providers on the class path.
   *
   * @return the scheme, not null
   */
  String scheme();

  /**
   * Returns one line describing the store and its URI form, for error messages and help, such as
   * {@code "file:/dir - one JSON file per slot (cdc-store-file)"}.
   *
   * @return a description, not null
   */
  String description();

  /**
   * Opens the store a URI of this provider's scheme names.
   *
   * @param uri a URI whose scheme is {@link #scheme()}
   * @return an open store; the caller closes it
   * @throws io.datum.cdc.CdcConfigurationException if the URI is malformed for this store (the
   *     message quotes it)
   * @throws io.datum.cdc.CdcStoreException if the store cannot be opened (locked by another
   *     process, corrupt, not writable)
   */
  CdcCheckpointStore open(URI uri);
}
