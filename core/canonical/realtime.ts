/** A realtime session's settings as the client asked for them (POST /v1/realtime/sessions). */
export interface RealtimeSessionSettings {
  modalities: string[];
  voice?: string;
  instructions?: string;
  input_audio_format?: string;
  output_audio_format?: string;
  tools?: unknown[];
}
