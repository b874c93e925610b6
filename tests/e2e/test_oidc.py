"""Single sign-on in Chromium against a real OpenID provider started by the suite (oidc-provider,
tests/oidc_provider): "Sign in with Test IdP" on Lagscope's login page, the provider's own login
form, back in Lagscope with the role the person's group gives; the same person taken out of the
admin group is a viewer at their next sign-in, and in no group is refused with a clear message.

No lab and no pipeline: the API serves the built UI over a SQLite store of its own.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import httpx
import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect

from tests.integration.oidc_provider import ALICE, sso_stack
from tests.integration.oidc_provider import SsoStack as Stack

from .conftest import DIST, TOKEN_KEY, new_context, shot

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def stack(tmp_path_factory) -> Iterator[Stack]:
    with sso_stack(
        tmp_path_factory.mktemp("e2e-oidc-provider"),
        tmp_path_factory.mktemp("e2e-oidc"),
        ui_dist=str(DIST),
    ) as started:
        yield started


@pytest.fixture
def context(browser: Browser, stack: Stack) -> Iterator[BrowserContext]:
    """A fresh browser: no Lagscope token, no session at the provider."""
    opened = new_context(browser, stack.api, None)
    try:
        yield opened
    finally:
        opened.close()


def sign_in_at_the_provider(page: Page, stack: Stack, login: str, start: str = "/") -> None:
    page.goto(start)
    page.get_by_role("link", name="Sign in with Test IdP").click()
    # The provider's own page, on its own origin: Lagscope never sees the password.
    login_field = page.locator('input[name="login"]')
    expect(login_field).to_be_visible()
    assert page.url.startswith(stack.provider.issuer + "/"), page.url
    login_field.fill(login)
    page.locator('input[name="password"]').fill("any password at the test provider")
    page.get_by_role("button", name="Sign-in").click()


def role_shown(page: Page, username: str, role: str) -> None:
    expect(page.locator(".who")).to_contain_text(f"{username} ({role})")


def role_at_the_api(page: Page, stack: Stack) -> str:
    token = page.evaluate(f"localStorage.getItem({TOKEN_KEY!r})")
    assert token, "no token kept after signing in"
    answer = httpx.get(
        f"{stack.api.url}/api/v1/auth/me", headers={"Authorization": f"Bearer {token}"}
    )
    answer.raise_for_status()
    return str(answer.json()["role"])


def test_sign_in_with_the_provider_and_lose_admin_at_the_next_sign_in(
    browser: Browser, stack: Stack
):
    stack.provider.set_accounts({"alice": {**ALICE, "groups": ["lagscope-admins"]}})
    first = new_context(browser, stack.api, None)
    try:
        page = first.new_page()
        page.goto("/settings")
        expect(page).to_have_url(f"{stack.api.url}/login?next=%2Fsettings")
        sign_in_at_the_provider(page, stack, "alice", start=page.url)
        # Back where the sign-in started (or the page it leads to), signed in as an admin.
        expect(page).to_have_url(re.compile(rf"^{re.escape(stack.api.url)}/settings(/\w+)?$"))
        role_shown(page, "alice", "admin")
        assert role_at_the_api(page, stack) == "admin"
        shot(page, "sso-signed-in-admin")
        page.get_by_role("button", name="Log out").click()
        expect(page.get_by_role("link", name="Sign in with Test IdP")).to_be_visible()
    finally:
        first.close()

    # Taken out of the admin group at the provider: a viewer from the next sign-in on.
    stack.provider.set_accounts({"alice": {**ALICE, "groups": ["lagscope-viewers"]}})
    second = new_context(browser, stack.api, None)
    try:
        page = second.new_page()
        sign_in_at_the_provider(page, stack, "alice")
        expect(page).to_have_url(f"{stack.api.url}/")
        role_shown(page, "alice", "viewer")
        assert role_at_the_api(page, stack) == "viewer"
    finally:
        second.close()


def test_someone_in_no_mapped_group_is_told_why(context: BrowserContext, stack: Stack):
    stack.provider.set_accounts({"bob": {"preferred_username": "bob", "groups": ["sales"]}})
    page = context.new_page()
    sign_in_at_the_provider(page, stack, "bob")
    refusal = page.get_by_role("alert")
    expect(refusal).to_contain_text("none of the groups that give a role in Lagscope")
    expect(page).to_have_url(f"{stack.api.url}/login?sso=1")
    assert page.evaluate(f"localStorage.getItem({TOKEN_KEY!r})") is None
    # Password sign-in stays on by default: the form is there beside the provider's button.
    expect(page.get_by_role("button", name="Sign in", exact=True)).to_be_visible()
    shot(page, "sso-refused-no-group")
