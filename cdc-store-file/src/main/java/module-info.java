/**
 * The {@code file:} checkpoint store: one file per slot in a directory, replaced atomically, file
 * and directory fsynced, the directory locked against a second store ({@link
 * io.datum.cdc.store.file.FileCheckpointStore}).
 */
module io.datum.cdc.store.file {
  requires transitive io.datum.cdc.api;
  requires static com.google.auto.service;

  exports io.datum.cdc.store.file;

  provides io.datum.cdc.CheckpointStoreProvider with
      io.datum.cdc.store.file.internal.FileCheckpointStoreProvider;
}
