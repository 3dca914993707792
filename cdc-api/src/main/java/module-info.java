/**
 * datum-cdc's API: LSNs, offsets and checkpoints ({@code io.datum.cdc}), the change-event model
 * ({@code io.datum.cdc.event}), and the SPI checkpoint stores implement ({@code io.datum.cdc.spi}).
 * Depends on the JDK only. Checkpoint stores are found with {@link java.util.ServiceLoader}: on the
 * module path a store module declares {@code provides io.datum.cdc.CheckpointStoreProvider}; the
 * {@code memory:} store is this module's own.
 */
module io.datum.cdc.api {
  // @AutoService writes META-INF/services for class-path users; compile time only
  requires static com.google.auto.service;

  exports io.datum.cdc;
  exports io.datum.cdc.event;
  exports io.datum.cdc.spi;

  uses io.datum.cdc.CheckpointStoreProvider;

  provides io.datum.cdc.CheckpointStoreProvider with
      io.datum.cdc.internal.MemoryCheckpointStoreProvider;
}
