"""`chatui.assets`: Chainlit's front end compressed once per process, the same bytes as the files, never a file
outside the folder."""

import gzip
import re

import httpx
import pytest
from starlette.exceptions import HTTPException

from chatui.assets import ChatAssets


async def test_each_file_is_compressed_once_and_reads_back_whole(tmp_path):
    (tmp_path / "assets").mkdir()
    bundle = b"function chat(){return 'answer'}\n" * 2000
    (tmp_path / "assets" / "index-abc.js").write_bytes(bundle)
    (tmp_path / "assets" / "logo.png").write_bytes(b"\x89PNG" + b"\0" * 2000)
    (tmp_path / "secret.txt").write_text("not an asset " * 100)
    assets = ChatAssets(tmp_path / "assets")
    for _ in range(3):
        response = await assets.response("index-abc.js", "gzip, deflate, br")
        assert response.headers["content-encoding"] == "gzip"
        assert gzip.decompress(response.body) == bundle
        assert response.headers["content-type"].startswith(("text/javascript", "application/javascript"))
        assert "immutable" in response.headers["cache-control"]
    assert assets.compressed == 1
    plain = await assets.response("index-abc.js", "")  # a client that takes no gzip gets the file as it is
    assert "content-encoding" not in plain.headers and plain.path == (tmp_path / "assets" / "index-abc.js").resolve()
    for refusing in ("gzip;q=0", "deflate, gzip; q=0.0", "br"):  # a client that says no to gzip is heard
        assert "content-encoding" not in (await assets.response("index-abc.js", refusing)).headers, refusing
    assert (await assets.response("index-abc.js", "br, *;q=0.5")).headers["content-encoding"] == "gzip"
    image = await assets.response("logo.png", "gzip")  # already compressed: sent as it is
    assert "content-encoding" not in image.headers and assets.compressed == 1
    for outside in ("../secret.txt", "..%2Fsecret.txt", "/etc/passwd", "missing.js", "", "a\x00b.js", "x" * 5000):
        with pytest.raises(HTTPException) as refused:
            await assets.response(outside, "gzip")
        assert refused.value.status_code == 404, outside


def test_the_served_chat_loads_its_bundle_compressed(server):
    """The chat's page names its bundle; the route in front of Chainlit's answers with the gzip of the same bytes."""
    from pathlib import Path

    import chainlit.server

    page = httpx.get(server + "/chat/").text
    (name,) = set(re.findall(r"/chat/assets/(index-[\w-]+\.js)", page))
    response = httpx.get(f"{server}/chat/assets/{name}", headers={"Accept-Encoding": "gzip"})
    assert response.status_code == 200 and response.headers["content-encoding"] == "gzip"
    assert response.content == (Path(chainlit.server.build_dir) / "assets" / name).read_bytes()  # (httpx decodes)
    assert "immutable" in response.headers["cache-control"]
    assert "content-security-policy" in response.headers  # the chat's policy covers it like any /chat response
    assert httpx.get(f"{server}/chat/assets/..%2F..%2Fserver.py").status_code == 404
    assert httpx.get(f"{server}/chat/assets/a%00b.js").status_code == 404  # was a 500 (an embedded null byte)
