import Foundation
import JWTKit
import LiveBindEngine

/// The claims LiveBind reads from a JSON Web Token: what it allows (`scope`, `models`) and when and
/// for whom it is valid (`exp`, `nbf`, `aud`, `iss`). Decoded and its signature checked by jwt-kit;
/// the time, audience and issuer checks run in `JWTVerifier`, which knows the server's settings.
struct JWTClaims: JWTPayload {
    /// When the token stops being valid; required, so that no token is valid forever.
    var exp: ExpirationClaim
    /// When the token starts being valid.
    var nbf: NotBeforeClaim?
    /// Whom the token is for (a string or a list).
    var aud: AudienceClaim?
    /// Who issued the token.
    var iss: IssuerClaim?
    /// Whom the token is about: its cookie sessions are counted per subject (`--max-sessions-per-credential`).
    var sub: SubjectClaim?
    /// Space-separated scopes, as OAuth writes them: `"read write"`. Words other than `read` and
    /// `write` are ignored; without the claim the token may do nothing.
    var scope: String?
    /// Model-name prefixes the token reaches (`["lab-"]`); without the claim, every model.
    var models: [String]?

    /// The checks that need no settings are done by `JWTVerifier` with the others, at one instant.
    func verify(using algorithm: some JWTAlgorithm) async throws {}
}
