/** Implementation classes of the JDBC checkpoint store; not API, may change in any release. */
package io.datum.cdc.store.jdbc.internal;
