"""Headless Chromium for the parlour page's browser test: Debian's
`chromium` and `chromium-driver`, installed when missing and root can
(`python -m host_tools.fleet.browser --install`, what `make browser`
runs, as `make broker` installs mosquitto), driven by selenium with the
driver's path given, so that nothing is downloaded (the machine may have
no internet).

    with chromium(folder) as drv:
        drv.get(url)
"""

import contextlib
import os
import sys

from host_tools.fleet import debian

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
# A Chinese font for the screenshots of the page in Chinese (without one
# they show boxes; the test reads the texts, not the pixels): optional.
CJK_FONT = "/usr/share/fonts/truetype/wqy/wqy-microhei.ttc"
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--window-size=1280,900")


class BrowserError(Exception):
    pass


def installed():
    return os.path.exists(CHROMIUM) and os.path.exists(CHROMEDRIVER)


def install():
    """Debian's chromium and chromium-driver when missing (and the Chinese
    font, the screenshots' only, when root can): apt-get as root, else the
    one command to run, said (debian.py)."""
    debian.install(["chromium", "chromium-driver", "fonts-wqy-microhei"], installed, BrowserError,
                   user="the browser test", role="the page's browser test",
                   named=[CHROMIUM, CHROMEDRIVER],
                   complete=lambda: installed() and os.path.exists(CJK_FONT))


@contextlib.contextmanager
def chromium(user_data_dir):
    """A selenium driver of headless Chromium with a fresh profile in
    `user_data_dir`; quit at the end."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for flag in FLAGS:
        opts.add_argument(flag)
    opts.add_argument("--user-data-dir=%s" % user_data_dir)
    drv = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=opts)
    try:
        yield drv
    finally:
        drv.quit()


def main(argv):
    return debian.main(argv, "host_tools.fleet.browser", install, BrowserError)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
