# SPDX-License-Identifier: MIT
# Homebrew formula for jaccl-config, for a tap:
#   brew install OWNER/tap/jaccl-config
# Copy it into the tap's Formula/ folder; at each release set url and
# sha256 to the tarball `make dist` made for it.
class JacclConfig < Formula
  desc "Discover, configure and verify Thunderbolt clusters for MLX distributed jobs"
  homepage "https://github.com/OWNER/jaccl-config"
  url "https://github.com/OWNER/jaccl-config/releases/download/v0.1.0/jaccl-config-0.1.0.tar.gz"
  sha256 "0000000000000000000000000000000000000000000000000000000000000000"
  license "MIT"

  head do
    url "https://github.com/OWNER/jaccl-config.git", branch: "main"

    depends_on "autoconf" => :build
    depends_on "automake" => :build
    depends_on "libtool" => :build
  end

  depends_on "pkgconf" => :build
  depends_on "graphviz"
  depends_on "jansson"
  depends_on "libssh"
  depends_on "xxhash"

  uses_from_macos "libxml2"

  def install
    system "autoreconf", "--force", "--install", "--verbose" if build.head?
    system "./configure", "--disable-silent-rules", *std_configure_args
    system "make", "install"
  end

  test do
    assert_match version.to_s, shell_output("#{bin}/jaccl-config --version")
    dot = shell_output("#{bin}/jaccl-config --from #{pkgshare}/examples/studio-mesh4 --dot")
    assert_match(/^graph G \{/, dot)
    assert_match "a [label=\"m3-ultra-1\"];", dot
    assert_equal 6, dot.scan(/ -- /).length
  end
end
