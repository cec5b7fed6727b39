// SPDX-License-Identifier: Apache-2.0
// What a database backend does for the store: one connection, used from one thread at a time.
// The queued store (queued_store.cpp) holds two: one its writer thread commits with, one that
// answers queries.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "store.h"

namespace store {

class Backend {
 public:
  virtual ~Backend() = default;
  // Commits every period of the batch in one transaction, or none of them. Throws StoreError.
  virtual void write(const std::vector<Period>& batch) = 0;
  // Adds or updates (by JVM, connection, connected_ms) every connection of the batch in one
  // transaction, or none of them (ProfileStore::record_connection). Throws StoreError.
  virtual void write_connections(const std::vector<Connection>& batch) = 0;
  virtual std::vector<Connection> connections(const std::vector<JvmIdentity>& jvms,
                                              size_t per_jvm) = 0;
  virtual std::vector<profiles::Stack> query(const Query& q) = 0;
  virtual std::vector<StoredJvm> jvms() = 0;
  virtual std::map<std::string, std::vector<std::string>> labels() = 0;
  virtual std::vector<TimelinePoint> timeline(const Query& q, int64_t bucket_ms,
                                              const std::string& group_by_label) = 0;
  virtual std::map<profiles::Measure, std::vector<TimelinePoint>> timelines(
      const Query& q, int64_t bucket_ms, const std::string& group_by_label) = 0;
  virtual MaintenanceResult maintain(const RetentionPolicy& policy, int64_t now_ms) = 0;
  virtual std::string describe() const = 0;
};

// Opens one connection; the first one made for a location creates or migrates the schema.
using BackendFactory = std::function<std::unique_ptr<Backend>()>;

std::unique_ptr<Backend> open_sqlite_backend(const std::string& path);
std::unique_ptr<Backend> open_postgres_backend(const std::string& uri);

// A ProfileStore over a backend: a bounded queue and one writer thread.
std::unique_ptr<ProfileStore> make_queued_store(const BackendFactory& open,
                                                const StoreOptions& options);

}  // namespace store
