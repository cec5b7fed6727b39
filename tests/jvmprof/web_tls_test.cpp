// SPDX-License-Identifier: Apache-2.0
// jvmprof serve's web UI with a certificate (what serve gives it on a --ui-bind beyond loopback):
// HTTPS only, on a loopback port here so that no network namespace is needed. The CA and the
// server's certificate for 127.0.0.1 are made with the openssl command; the clients are
// cpp-httplib's over OpenSSL.
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>

#include "session_registry.h"
#include "web_server.h"

namespace {

const char kToken[] = "secret-token";

class WebTls : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    // As serve does: a client that goes away makes a write fail, not end the process.
    ::signal(SIGPIPE, SIG_IGN);
    dir_ = new std::string(testing::TempDir() + "jvmprof-web-tls-" + std::to_string(::getpid()));
    std::filesystem::create_directories(*dir_);
    const std::string sh =
        "cd '" + *dir_ +
        "' && openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem "
        "-subj /CN=test-ca -days 1 && openssl req -newkey rsa:2048 -nodes -keyout server.key "
        "-out server.csr -subj /CN=ui && echo subjectAltName=IP:127.0.0.1 > san.ext && "
        "openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 1 "
        "-extfile san.ext -out server.pem";
    made_ = std::system(("(" + sh + ") > /dev/null 2>&1").c_str()) == 0;
  }
  static void TearDownTestSuite() {
    std::filesystem::remove_all(*dir_);
    delete dir_;
  }

  void SetUp() override {
    if (!made_) GTEST_SKIP() << "openssl could not make the certificates";
    jvmprof::SessionLimits limits;
    limits.spool_dir = *dir_;
    registry_ = std::make_unique<jvmprof::SessionRegistry>(limits);
  }
  void TearDown() override {
    if (server_) server_->stop();
    if (thread_.joinable()) thread_.join();
  }

  // Starts the UI; with `tls`, with the test's certificate and KEY (a file in the directory).
  int start(bool tls, const std::string& key = "server.key", std::string* error = nullptr) {
    jvmprof::WebOptions options;
    options.token = kToken;
    if (tls) {
      options.tls_cert_file = *dir_ + "/server.pem";
      options.tls_key_file = *dir_ + "/" + key;
    }
    server_ = std::make_unique<jvmprof::WebServer>(*registry_, options);
    std::string why;
    port_ = server_->bind(why);
    if (error) *error = why;
    if (port_ > 0) thread_ = std::thread([this] { server_->run(); });
    return port_;
  }

  std::unique_ptr<httplib::SSLClient> https(bool trust_ca) const {
    auto client = std::make_unique<httplib::SSLClient>("127.0.0.1", port_);
    client->enable_server_certificate_verification(true);
    if (trust_ca) client->set_ca_cert_path((*dir_ + "/ca.pem").c_str());
    client->set_connection_timeout(30);
    client->set_read_timeout(30);
    return client;
  }

  static std::string* dir_;
  static bool made_;
  std::unique_ptr<jvmprof::SessionRegistry> registry_;
  std::unique_ptr<jvmprof::WebServer> server_;
  std::thread thread_;
  int port_ = 0;
};

std::string* WebTls::dir_ = nullptr;
bool WebTls::made_ = false;

TEST_F(WebTls, PageOverHttpsWithTheCaAndTheToken) {
  ASSERT_GT(start(true), 0);
  EXPECT_STREQ(server_->scheme(), "https");
  auto res = https(true)->Get(std::string("/?token=") + kToken);
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  EXPECT_EQ(res->status, 200);
  EXPECT_NE(res->body.find("<title>jvmprof</title>"), std::string::npos);
  // The token's cookie is never sent back over plain HTTP.
  const std::string cookie = res->get_header_value("Set-Cookie");
  EXPECT_NE(cookie.find("jvmprof_token="), std::string::npos) << cookie;
  EXPECT_NE(cookie.find("; Secure"), std::string::npos) << cookie;
}

TEST_F(WebTls, TokenHostAndOriginChecksHoldOverHttps) {
  ASSERT_GT(start(true), 0);
  const std::string self = "127.0.0.1:" + std::to_string(port_);
  auto client = https(true);
  auto res = client->Get("/api/profiles");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 401);
  res = client->Get("/api/profiles", {{"X-Jvmprof-Token", kToken}});
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  res = client->Get("/api/profiles", {{"X-Jvmprof-Token", kToken},
                                      {"Host", "attacker.example:" + std::to_string(port_)}});
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 403);
  // The page's own origin is https://; the same host over http:// is another origin.
  res = client->Get("/api/profiles", {{"X-Jvmprof-Token", kToken}, {"Origin", "https://" + self}});
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  res = client->Get("/api/profiles", {{"X-Jvmprof-Token", kToken}, {"Origin", "http://" + self}});
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 403);
}

TEST_F(WebTls, NoPageWithoutTheCa) {
  ASSERT_GT(start(true), 0);
  auto res = https(false)->Get(std::string("/?token=") + kToken);
  ASSERT_FALSE(res);
  EXPECT_EQ(res.error(), httplib::Error::SSLServerVerification);
}

TEST_F(WebTls, NoPageOverPlainHttp) {
  ASSERT_GT(start(true), 0);
  httplib::Client client("127.0.0.1", port_);
  client.set_connection_timeout(30);
  client.set_read_timeout(30);
  auto res = client.Get(std::string("/?token=") + kToken);
  // The TLS handshake fails on the request's first bytes: no answer at all.
  EXPECT_FALSE(res) << res->status << " " << res->body.substr(0, 200);
}

TEST_F(WebTls, KeyThatIsNotTheCertificatesRefusedWithOneLine) {
  std::string error;
  EXPECT_LT(start(true, "ca.key", &error), 0);
  EXPECT_NE(error.find("cannot use --tls-key"), std::string::npos) << error;
  EXPECT_EQ(error.find('\n'), std::string::npos) << error;
}

TEST_F(WebTls, WithoutACertificatePlainHttpAsBefore) {
  ASSERT_GT(start(false), 0);
  EXPECT_STREQ(server_->scheme(), "http");
  httplib::Client client("127.0.0.1", port_);
  auto res = client.Get(std::string("/?token=") + kToken);
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->get_header_value("Set-Cookie").find("Secure"), std::string::npos);
  EXPECT_FALSE(https(true)->Get(std::string("/?token=") + kToken));
}

}  // namespace
