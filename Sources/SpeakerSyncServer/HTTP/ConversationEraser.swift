/// Deletes stored conversations (`DELETE /v1/conversations/{id}`): the conversation and everything
/// stored with it (speakers, words, turns, voice profiles, labellings).
protocol ConversationEraser: Sendable {
    /// False when there was no such conversation.
    func deleteConversation(id: String) throws -> Bool
}
