/**
 * The {@code jdbc:} scheme's {@code CheckpointStoreProvider}, found by ServiceLoader; not API. Its
 * own package so that the implementation classes ({@code internal}) need nothing of the API package
 * that uses them (no package cycle).
 */
package io.datum.cdc.store.jdbc.provider;
